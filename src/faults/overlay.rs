//! The faults overlay: a [`Handler`] around another (replay's engine, a
//! fixture's mock) that answers as it does, except where a fault rule
//! fires.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::answers;
use super::choose::{self, Counts, Firing};
use super::output::{self, After, Shaping};
use super::prefilter::Prefilter;
use super::report::{FaultsSummary, Fired, Hung, KEPT_FIRED};
use crate::cassette::{Fault, Faults, HttpSituation, Interaction, ListChange, ListKind, Malformed};
use crate::jsonrpc::{self, Kind, codes};
use crate::protocol::META_SUBSCRIPTION_ID as SUBSCRIPTION_ID;
use crate::server::{Handled, Handler, HttpProfile, Sink};

/// A handler that misbehaves as its faults say.
#[derive(Debug)]
pub struct FaultOverlay {
    inner: Arc<dyn Handler>,
    shared: Arc<Shared>,
    /// This client session (1-based).
    session: u64,
    state: Mutex<SessionState>,
}

/// What every session of one overlay shares.
#[derive(Debug)]
struct Shared {
    faults: Faults,
    /// What a rule may concern: anything else goes straight to the
    /// handler (its text path included).
    prefilter: Prefilter,
    sessions: AtomicU64,
    report: Mutex<Report>,
    /// List changes that have come into force.
    changes: Arc<Mutex<Vec<ListChange>>>,
    /// The tools the handler lists, for `tool_error`'s structured content
    /// and changed lists: read the first time one asks (finding them may
    /// walk a whole cassette).
    tools: std::sync::OnceLock<Vec<Value>>,
    /// The lists some fault changes, which the handshake says may change.
    changing: Vec<ListKind>,
    /// The client has gone (or the replay is stopping): what closes now
    /// was not closed by the client.
    ending: std::sync::atomic::AtomicBool,
}

#[derive(Debug, Default)]
struct Report {
    fired: Vec<Fired>,
    fired_not_kept: usize,
    fired_rules: Vec<bool>,
    hung: Vec<Hung>,
    disconnected: Option<u8>,
}

#[derive(Debug)]
struct SessionState {
    counts: Counts,
    /// Requests held by `hang`, by id: their sinks, kept so the transport
    /// keeps waiting (an HTTP POST stays open), and their place in the
    /// report.
    hanging: HashMap<String, (Sink, usize)>,
    /// The client's open listen streams (2026-07-28): their sinks and ids.
    listening: Vec<(Sink, Value)>,
}

impl FaultOverlay {
    /// `inner`, misbehaving as `faults` say.
    pub fn new(inner: Arc<dyn Handler>, faults: Faults) -> Arc<Self> {
        let prefilter = Prefilter::new(&faults);
        let mut changing = Vec::new();
        for rule in &faults.rules {
            if let Fault::ListChanged(change) = &rule.fault
                && !changing.contains(&change.list)
            {
                changing.push(change.list);
            }
        }
        let shared = Arc::new(Shared {
            report: Mutex::new(Report {
                fired_rules: vec![false; faults.rules.len()],
                ..Report::default()
            }),
            faults,
            prefilter,
            // The first fork is session 1 too: over HTTP every client
            // session is a fork, and the root answers none of them.
            sessions: AtomicU64::new(0),
            changes: Arc::default(),
            tools: std::sync::OnceLock::new(),
            changing,
            ending: std::sync::atomic::AtomicBool::new(false),
        });
        Arc::new(Self::session(inner, shared, 1))
    }

    fn session(inner: Arc<dyn Handler>, shared: Arc<Shared>, session: u64) -> Self {
        let rules = shared.faults.rules.len();
        FaultOverlay {
            inner,
            shared,
            session,
            state: Mutex::new(SessionState {
                counts: Counts::new(rules),
                hanging: HashMap::new(),
                listening: Vec::new(),
            }),
        }
    }

    /// The tools the handler lists.
    fn tools(&self) -> &Vec<Value> {
        self.shared
            .tools
            .get_or_init(|| self.inner.http_profile().tools)
    }

    /// What the faults did, over every session so far.
    pub fn summary(&self) -> FaultsSummary {
        let report = lock(&self.shared.report);
        let rules = self.shared.faults.rules.iter().enumerate();
        FaultsSummary {
            rules: rules.map(|(i, rule)| describe(i, rule)).collect(),
            fired: report.fired.clone(),
            fired_not_kept: report.fired_not_kept,
            unused: (report.fired_rules.iter().enumerate())
                .filter(|(_, fired)| !**fired)
                .map(|(i, _)| i)
                .collect(),
            hung: report.hung.clone(),
            disconnected: report.disconnected,
        }
    }

    /// The exit status a `disconnect` fault asked for, once one fired.
    pub fn disconnected(&self) -> Option<u8> {
        lock(&self.shared.report).disconnected
    }

    fn state(&self) -> MutexGuard<'_, SessionState> {
        lock(&self.state)
    }

    /// Whether a request of `method` may concern a fault at all.
    fn concerns(&self, method: &str) -> bool {
        self.shared.prefilter.concerns_method(method)
    }

    fn note(&self, firing: Firing, method: &str, request: &Value, did: String) {
        let fault = &self.shared.faults.rules[firing.rule].fault;
        let mut report = lock(&self.shared.report);
        report.fired_rules[firing.rule] = true;
        if report.fired.len() >= KEPT_FIRED {
            report.fired_not_kept += 1;
            return;
        }
        report.fired.push(Fired {
            fault: firing.rule,
            kind: fault.kind(),
            session: self.session,
            request: answers::label(method, request),
            id: jsonrpc::id(request).cloned().unwrap_or(Value::Null),
            did,
        });
    }

    /// Answers a request some rule may concern.
    fn request(
        self: Arc<Self>,
        request: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
        situation: &HttpSituation,
    ) -> Handled {
        let method = jsonrpc::method(&request).unwrap_or_default().to_owned();
        let id = jsonrpc::id(&request).cloned().unwrap_or(Value::Null);
        if let Some(unknown) = self.removed(&method, &request, &id) {
            self.inner.stand_in(&request);
            sink.respond(&unknown);
            return Handled::Answered(None);
        }
        if let Some(list) = self.changed_tools(&method, &request, &id) {
            // The tools as the server now lists them, however often the
            // recording was asked.
            self.inner.stand_in(&request);
            sink.respond(&list);
            return Handled::Answered(None);
        }
        let firing = {
            let mut state = self.state();
            choose::firing(
                &self.shared.faults,
                &mut state.counts,
                &method,
                &request,
                self.session,
            )
        };
        let rules = &self.shared.faults.rules;
        let replacing = firing
            .iter()
            .find(|f| rules[f.rule].fault.replaces_answer())
            .copied();
        if let Some(firing) = replacing {
            return self.replace(firing, &method, request, id, sink);
        }
        let mut shaping = Shaping::default();
        for &firing in &firing {
            self.shape(firing, &method, &request, sink, &mut shaping);
        }
        for change in lock(&self.shared.changes).iter() {
            if method == change.list.list_method() {
                shaping.lists.push(change.clone());
            }
        }
        if matches!(method.as_str(), "initialize" | "server/discover") {
            shaping.announces = self.shared.changing.clone();
        }
        let listen = method == "subscriptions/listen";
        if listen {
            self.state().listening.push((sink.clone(), id));
        }
        if shaping.is_plain() {
            return Arc::clone(&self.inner).handle(request, sink, tasks, situation);
        }
        let (channel, from) = mpsc::unbounded_channel();
        let rerouted = sink.rerouted(channel);
        let ahead = !shaping.ahead.is_empty();
        let handled = Arc::clone(&self.inner).handle(request, &rerouted, tasks, situation);
        drop(rerouted);
        tasks.spawn(output::forward(from, sink.clone(), shaping));
        match handled {
            Handled::Answered(position) if ahead => Handled::Streamed(position),
            handled => handled,
        }
    }

    /// A fault that answers instead of the recording.
    fn replace(
        &self,
        firing: Firing,
        method: &str,
        request: Value,
        id: Value,
        sink: &Sink,
    ) -> Handled {
        let fault = &self.shared.faults.rules[firing.rule].fault;
        self.inner.stand_in(&request);
        self.note(firing, method, &request, fault.to_string());
        match fault {
            Fault::Error(error) => sink.respond(&error.response(id)),
            Fault::ToolError(text) => {
                let name = request.pointer("/params/name").and_then(Value::as_str);
                let tool = self
                    .tools()
                    .iter()
                    .find(|t| t.get("name").and_then(Value::as_str) == name);
                let mut answer = answers::tool_error(text, tool, id);
                if modern(&request) {
                    // Every 2026-07-28 result says what kind it is.
                    answer["result"]["resultType"] = json!("complete");
                }
                sink.respond(&answer);
            }
            Fault::Hang => {
                let key = jsonrpc::id_key(&id);
                let mut report = lock(&self.shared.report);
                report.hung.push(Hung {
                    fault: firing.rule,
                    request: answers::label(method, &request),
                    id,
                    cancelled: false,
                });
                let at = report.hung.len() - 1;
                drop(report);
                if modern(&request) {
                    self.watch_stream(sink, at);
                }
                self.state().hanging.insert(key, (sink.clone(), at));
            }
            Fault::Malformed(kind) => {
                let _ = sink.responses.send(answers::malformed(*kind, &id));
            }
            Fault::Http(http) => return Handled::Status(Box::new(answers::status(http))),
            _ => unreachable!("only faults that replace the answer get here"),
        }
        Handled::Answered(None)
    }

    /// A fault that changes how the recorded answer goes.
    fn shape(
        &self,
        firing: Firing,
        method: &str,
        request: &Value,
        sink: &Sink,
        shaping: &mut Shaping,
    ) {
        let rule = &self.shared.faults.rules[firing.rule];
        let mut did = rule.fault.to_string();
        match &rule.fault {
            Fault::Delay(delay) => {
                let seed = rule.select.seed.unwrap_or(self.shared.faults.seed);
                let ms =
                    choose::wait_ms(delay.wait, seed, firing.rule, self.session, firing.ordinal);
                did = format!("delay {ms} ms");
                let total = shaping.delay.unwrap_or_default() + Duration::from_millis(ms);
                shaping.delay = Some(total);
                shaping.between |= delay.between_notifications;
            }
            Fault::DropNotifications(methods) => match &mut shaping.drop {
                // Every notification already, or now.
                Some(all) if all.is_empty() => {}
                _ if methods.is_empty() => shaping.drop = Some(Vec::new()),
                Some(some) => some.extend(methods.iter().cloned()),
                None => shaping.drop = Some(methods.clone()),
            },
            Fault::Mutate(edits) => shaping.edits.extend(edits.iter().cloned()),
            Fault::Malformed(Malformed::Truncated) => shaping.truncate = true,
            Fault::Disconnect(disconnect) => {
                lock(&self.shared.report).disconnected = Some(disconnect.exit);
                shaping.disconnect = Some(
                    shaping
                        .disconnect
                        .map_or(disconnect.after, |n| n.min(disconnect.after)),
                );
            }
            Fault::ListChanged(change) => {
                let notification = json!({"jsonrpc": "2.0", "method": change.list.notification()});
                let mut announce = Vec::new();
                let listening = &self.state().listening;
                for (stream, live) in listening.iter().filter(|(s, _)| !s.events.is_closed()) {
                    let mut tagged = notification.clone();
                    tagged["params"] = json!({"_meta": {SUBSCRIPTION_ID: live}});
                    announce.push((Some(stream.clone()), tagged));
                }
                if !announce.is_empty() {
                    did = format!("{did}; announced on {} listen stream(s)", announce.len());
                } else if sink.has_session() {
                    // A legacy HTTP session: on its own stream, after.
                    announce.push((None, notification));
                    did = format!("{did}; announced on the session's stream");
                } else {
                    // No stream of its own (stdio, or stateless HTTP): with
                    // the answer, before its response.
                    shaping.ahead.push(notification);
                    did = format!("{did}; announced with the answer");
                }
                let after = shaping.after.get_or_insert_with(|| After {
                    changes: Vec::new(),
                    in_force: Arc::clone(&self.shared.changes),
                    announce: Vec::new(),
                });
                after.changes.push(change.clone());
                after.announce.extend(announce);
            }
            _ => unreachable!("faults that replace the answer are not shaping"),
        }
        self.note(firing, method, request, did);
    }

    /// `tools/list` once a change to the tools is in force: the tools the
    /// recording listed, changed (the first page asked only: later pages
    /// are answered as recorded).
    fn changed_tools(&self, method: &str, request: &Value, id: &Value) -> Option<Value> {
        if method != "tools/list" || request.pointer("/params/cursor").is_some() {
            return None;
        }
        let changes = lock(&self.shared.changes);
        let mut tools = changes
            .iter()
            .any(|c| c.list == ListKind::Tools)
            .then(|| json!({"tools": self.tools().clone()}))?;
        for change in changes.iter().filter(|c| c.list == ListKind::Tools) {
            output::change_list(&mut tools, change);
        }
        if modern(request) {
            tools = crate::fixture::modern_result(method, tools);
        }
        Some(jsonrpc::result_response(id.clone(), tools))
    }

    /// An error for a call to an item a list change removed, as a server
    /// that no longer has it answers (-32602, "Unknown tool").
    fn removed(&self, method: &str, request: &Value, id: &Value) -> Option<Value> {
        let changes = lock(&self.shared.changes);
        let change = changes.iter().find(|c| c.list.use_method() == method)?;
        let key = change.list.key();
        let named = request.pointer(&format!("/params/{key}"))?.as_str()?;
        if !changes
            .iter()
            .filter(|c| c.list.use_method() == method)
            .any(|c| c.remove.iter().any(|r| r == named))
        {
            return None;
        }
        let what = match change.list.items() {
            "tools" => "tool",
            "prompts" => "prompt",
            _ => "resource",
        };
        let message = format!("Unknown {what}: {named}");
        Some(jsonrpc::error_response(
            id.clone(),
            codes::INVALID_PARAMS,
            &message,
            None,
        ))
    }

    /// In 2026-07-28, closing a request's stream cancels it: a held
    /// request whose answer's channel closes before the replay ends was
    /// cancelled that way (over stdio the channel closes only after the
    /// client has gone, which marks nothing).
    fn watch_stream(&self, sink: &Sink, at: usize) {
        let events = sink.events.clone();
        let shared = Arc::clone(&self.shared);
        tokio::spawn(async move {
            events.closed().await;
            if !shared.ending.load(Ordering::Relaxed) {
                lock(&shared.report).hung[at].cancelled = true;
            }
        });
    }

    /// A client's `notifications/cancelled`: a request held by `hang` ends,
    /// unanswered, as the specification says.
    fn cancelled(&self, notification: &Value) {
        let Some(id) = notification.pointer("/params/requestId") else {
            return;
        };
        let held = self.state().hanging.remove(&jsonrpc::id_key(id));
        if let Some((_, at)) = held {
            lock(&self.shared.report).hung[at].cancelled = true;
        }
    }
}

impl Handler for FaultOverlay {
    fn handle(
        self: Arc<Self>,
        message: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
        situation: &HttpSituation,
    ) -> Handled {
        if !situation.is_normal() {
            // Faults hit ordinary requests; the rest (a stale session, a
            // foreign origin) are answered as the transport says.
            return Arc::clone(&self.inner).handle(message, sink, tasks, situation);
        }
        match jsonrpc::classify(&message) {
            Ok(Kind::Request) if self.concerns(jsonrpc::method(&message).unwrap_or_default()) => {
                self.request(message, sink, tasks, situation)
            }
            Ok(Kind::Notification)
                if jsonrpc::method(&message) == Some("notifications/cancelled") =>
            {
                self.cancelled(&message);
                Arc::clone(&self.inner).handle(message, sink, tasks, situation)
            }
            _ => Arc::clone(&self.inner).handle(message, sink, tasks, situation),
        }
    }

    fn handle_text(
        self: Arc<Self>,
        line: &[u8],
        sink: &Sink,
        tasks: &mut JoinSet<()>,
    ) -> Option<Handled> {
        // The handler's text path, for lines that concern no fault.
        if self.shared.prefilter.concerns_line(line) {
            return None;
        }
        Arc::clone(&self.inner).handle_text(line, sink, tasks)
    }

    fn stand_in(&self, request: &Value) {
        self.inner.stand_in(request);
    }

    fn open(self: Arc<Self>, sink: &Sink, tasks: &mut JoinSet<()>) {
        Arc::clone(&self.inner).open(sink, tasks);
    }

    fn fork(&self) -> Arc<dyn Handler> {
        let session = self.shared.sessions.fetch_add(1, Ordering::Relaxed) + 1;
        Arc::new(FaultOverlay::session(
            self.inner.fork(),
            Arc::clone(&self.shared),
            session,
        ))
    }

    fn client_gone(&self) {
        self.shared.ending.store(true, Ordering::Relaxed);
        self.state().hanging.clear();
        self.inner.client_gone();
    }

    fn recorded(&self, position: usize) -> Option<&Interaction> {
        self.inner.recorded(position)
    }

    fn http_profile(&self) -> HttpProfile {
        self.inner.http_profile()
    }
}

/// Whether a request speaks 2026-07-28 (its `_meta` declares a version).
fn modern(request: &Value) -> bool {
    crate::protocol::declared_version(request).is_some()
}

/// A rule in a few words, for the summary.
pub(crate) fn describe(index: usize, rule: &crate::cassette::FaultRule) -> String {
    let select = &rule.select;
    let mut words = vec![format!("#{index}")];
    words.extend(select.method.clone());
    words.extend(select.name.as_ref().map(|n| format!("name {n}")));
    words.extend(select.uri.as_ref().map(|u| format!("uri {u}")));
    if select.when.is_some() {
        words.push("when …".to_owned());
    }
    if let Some(nth) = select.nth {
        words.push(format!("nth {nth}"));
    }
    if let Some(times) = select.times {
        words.push(format!("times {times}"));
    }
    if let Some(p) = select.probability {
        words.push(format!("probability {p}"));
    }
    if let Some(session) = select.session {
        words.push(format!("session {session}"));
    }
    format!("{}: {}", words.join(" "), rule.fault)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
