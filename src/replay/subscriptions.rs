//! Where replayed change notifications go: the open `subscriptions/listen`
//! streams that asked for them (2026-07-28), or the session (legacy).
//!
//! A 2026-07-28 server sends `notifications/*/list_changed` and
//! `notifications/resources/updated` only on the listen streams whose
//! filter asked for them, tagged with the listen request's id in
//! `_meta["io.modelcontextprotocol/subscriptionId"]`. `record` files such a
//! notification under the request that caused it (the tool call that
//! changed a list), so replay plays it when it plays that request, and this
//! module sends it down the live listen stream that was matched to the
//! recorded one, with the live listen request's id. A notification for a
//! listen stream the client did not open again is not sent, as a live
//! server would not.
//!
//! Across eras, the same notifications are translated:
//! - a legacy client gets a modern recording's notifications without the
//!   subscription tag (`list_changed` as a legacy server sends it to its
//!   session, `resources/updated` only for the URIs it subscribed to with
//!   `resources/subscribe`, which replay accepts);
//! - a modern client that opens `subscriptions/listen` on a legacy
//!   recording gets the acknowledgement (the filter it asked for, narrowed
//!   to the recorded capabilities) and then each recorded change
//!   notification its filter accepts, tagged with its listen id; one with
//!   no such stream open gets none, as from a modern server.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::cross_era::Translation;
use crate::jsonrpc;
use crate::protocol::META_SUBSCRIPTION_ID as SUBSCRIPTION_ID;
use crate::server::Sink;

/// The acknowledgement that opens every listen stream.
pub(crate) const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// The notifications a listen filter can ask for, and its flag for each.
const LIST_CHANGED: [(&str, &str); 3] = [
    ("notifications/tools/list_changed", "toolsListChanged"),
    ("notifications/prompts/list_changed", "promptsListChanged"),
    (
        "notifications/resources/list_changed",
        "resourcesListChanged",
    ),
];

/// `notifications/resources/updated`, filtered by URI.
const UPDATED: &str = "notifications/resources/updated";

/// The tasks extension's status notification (2026-07-28), which a server
/// may send on a listen stream; it has no legacy counterpart that replay
/// could translate it to (2025-11-25's `notifications/tasks/status` belongs
/// to other task methods).
const TASK_STATUS: &str = "notifications/tasks";

/// Whether `notification` may need routing: cheap, so that every other
/// notification goes straight out without taking the engine's lock.
pub(crate) fn concerns(notification: &Value) -> bool {
    match jsonrpc::method(notification) {
        Some(method) => {
            method == ACKNOWLEDGED
                || method == UPDATED
                || method == TASK_STATUS
                || LIST_CHANGED.iter().any(|(name, _)| *name == method)
        }
        None => false,
    }
}

/// What a listen stream's filter accepts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Filter {
    /// The `*ListChanged` flags set, by filter field name.
    list_changed: BTreeSet<&'static str>,
    /// `resourceSubscriptions`.
    resources: BTreeSet<String>,
}

impl Filter {
    /// The filter a `subscriptions/listen` request asks for.
    pub(crate) fn requested(request: &Value) -> Filter {
        let asked = request.pointer("/params/notifications");
        let flag = |field: &str| asked.and_then(|a| a.get(field)) == Some(&Value::Bool(true));
        Filter {
            list_changed: LIST_CHANGED
                .iter()
                .map(|(_, field)| *field)
                .filter(|field| flag(field))
                .collect(),
            resources: asked
                .and_then(|a| a.get("resourceSubscriptions"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        }
    }

    /// The part of this filter a server with `capabilities` (as recorded)
    /// honours: `listChanged` per list, `resources.subscribe` for URIs.
    pub(crate) fn narrowed_to(mut self, capabilities: &Value) -> Filter {
        let declares = |pointer: &str| capabilities.pointer(pointer) == Some(&Value::Bool(true));
        self.list_changed.retain(|field| {
            let list = field.trim_end_matches("ListChanged");
            declares(&format!("/{list}/listChanged"))
        });
        if !declares("/resources/subscribe") {
            self.resources.clear();
        }
        self
    }

    /// The filter as `notifications/subscriptions/acknowledged` reports it.
    pub(crate) fn to_json(&self) -> Value {
        let mut filter = serde_json::Map::new();
        for field in &self.list_changed {
            filter.insert((*field).to_owned(), Value::Bool(true));
        }
        if !self.resources.is_empty() {
            filter.insert("resourceSubscriptions".into(), json!(self.resources));
        }
        Value::Object(filter)
    }

    fn accepts(&self, notification: &Value) -> bool {
        let method = jsonrpc::method(notification).unwrap_or_default();
        if method == UPDATED {
            return uri(notification).is_some_and(|uri| self.resources.contains(uri));
        }
        LIST_CHANGED
            .iter()
            .any(|(name, field)| *name == method && self.list_changed.contains(field))
    }
}

/// One open listen stream of the live client.
#[derive(Debug)]
struct Listener {
    /// The recorded listen request it was matched to (its id, as a key);
    /// `None` for one replay opened from a legacy recording.
    recorded: Option<String>,
    /// The live listen request's id, which its notifications carry.
    live: Value,
    /// What it accepts (only consulted for streams replay opened itself:
    /// a recorded stream got what the recorded server sent it).
    filter: Filter,
    sink: Sink,
}

/// Where one notification goes.
#[derive(Debug)]
pub(crate) enum Route {
    /// Where the interaction's other messages go, as it is.
    Here(Value),
    /// Down these listen streams, each with its own tag.
    Streams(Vec<(Sink, Value)>),
    /// Nowhere: no live stream asked for it.
    Dropped,
}

/// The live client's listen streams, and (a legacy client of a modern
/// recording) the resources it subscribed to.
#[derive(Debug, Default)]
pub(crate) struct Listeners {
    open: Vec<Listener>,
    subscribed: BTreeSet<String>,
}

impl Listeners {
    /// A live listen stream matched to the recorded listen request
    /// `recorded`, answering the live `request`, whose messages go to
    /// `sink`.
    pub(crate) fn open_recorded(&mut self, recorded: &Value, request: &Value, sink: &Sink) {
        self.open_stream(
            Some(jsonrpc::id_key(recorded)),
            request,
            Filter::default(),
            sink,
        );
    }

    /// A listen stream replay opens itself (a modern client, a legacy
    /// recording); returns its acknowledgement, to send first.
    pub(crate) fn open_translated(
        &mut self,
        request: &Value,
        capabilities: &Value,
        sink: &Sink,
    ) -> Value {
        let filter = Filter::requested(request).narrowed_to(capabilities);
        let id = jsonrpc::id(request).cloned().unwrap_or(Value::Null);
        let ack = json!({
            "jsonrpc": "2.0",
            "method": ACKNOWLEDGED,
            "params": {"_meta": {SUBSCRIPTION_ID: id}, "notifications": filter.to_json()},
        });
        self.open_stream(None, request, filter, sink);
        ack
    }

    fn open_stream(
        &mut self,
        recorded: Option<String>,
        request: &Value,
        filter: Filter,
        sink: &Sink,
    ) {
        self.open.retain(|l| !l.sink.events.is_closed());
        self.open.push(Listener {
            recorded,
            live: jsonrpc::id(request).cloned().unwrap_or(Value::Null),
            filter,
            sink: sink.clone(),
        });
    }

    /// A legacy client's `resources/subscribe` (`subscribe`) or
    /// `resources/unsubscribe` to a modern recording.
    pub(crate) fn subscription(&mut self, request: &Value, subscribe: bool) {
        let Some(uri) = request.pointer("/params/uri").and_then(Value::as_str) else {
            return;
        };
        if subscribe {
            self.subscribed.insert(uri.to_owned());
        } else {
            self.subscribed.remove(uri);
        }
    }

    /// The client's listen streams ended (they were cancelled, or the
    /// client went away): nothing more goes down them.
    pub(crate) fn close(&mut self, live: &Value) {
        let key = jsonrpc::id_key(live);
        self.open.retain(|l| jsonrpc::id_key(&l.live) != key);
    }

    /// Where a recorded change notification goes, for a client that gets
    /// `translation` (see the module documentation).
    pub(crate) fn route(&mut self, notification: &Value, translation: Translation) -> Route {
        self.open.retain(|l| !l.sink.events.is_closed());
        let tag = subscription_id(notification);
        match (translation, tag) {
            (Translation::ToLegacy, _) => self.to_legacy(notification),
            (_, Some(tag)) => {
                let key = jsonrpc::id_key(tag);
                let streams = self
                    .open
                    .iter()
                    .filter(|l| l.recorded.as_ref() == Some(&key))
                    .map(|l| (l.sink.clone(), tagged(notification, &l.live)))
                    .collect();
                streams_or_dropped(streams)
            }
            (Translation::ToModern, None)
                if jsonrpc::method(notification) != Some(ACKNOWLEDGED) =>
            {
                let streams = self
                    .open
                    .iter()
                    .filter(|l| l.recorded.is_none() && l.filter.accepts(notification))
                    .map(|l| (l.sink.clone(), tagged(notification, &l.live)))
                    .collect();
                streams_or_dropped(streams)
            }
            _ => Route::Here(notification.clone()),
        }
    }

    /// A modern recording's notification, as a legacy server sends it.
    fn to_legacy(&self, notification: &Value) -> Route {
        let method = jsonrpc::method(notification).unwrap_or_default();
        if method == ACKNOWLEDGED || method == TASK_STATUS {
            return Route::Dropped;
        }
        if method == UPDATED && !uri(notification).is_some_and(|u| self.subscribed.contains(u)) {
            return Route::Dropped;
        }
        Route::Here(untagged(notification))
    }
}

fn streams_or_dropped(streams: Vec<(Sink, Value)>) -> Route {
    if streams.is_empty() {
        Route::Dropped
    } else {
        Route::Streams(streams)
    }
}

/// The listen stream a notification names.
fn subscription_id(notification: &Value) -> Option<&Value> {
    notification
        .get("params")?
        .get("_meta")?
        .get(SUBSCRIPTION_ID)
}

fn uri(notification: &Value) -> Option<&str> {
    notification.pointer("/params/uri").and_then(Value::as_str)
}

/// `notification` tagged for the live listen stream `live`.
fn tagged(notification: &Value, live: &Value) -> Value {
    let mut notification = notification.clone();
    let params = &mut notification["params"];
    if !params.is_object() {
        *params = json!({});
    }
    let meta = &mut params["_meta"];
    if !meta.is_object() {
        *meta = json!({});
    }
    meta[SUBSCRIPTION_ID] = live.clone();
    notification
}

/// `notification` without its subscription tag (and without `_meta` or
/// `params` left empty by that).
fn untagged(notification: &Value) -> Value {
    let mut notification = notification.clone();
    let Some(params) = notification
        .get_mut("params")
        .and_then(Value::as_object_mut)
    else {
        return notification;
    };
    if let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.remove(SUBSCRIPTION_ID);
        if meta.is_empty() {
            params.remove("_meta");
        }
    }
    if params.is_empty()
        && let Some(object) = notification.as_object_mut()
    {
        object.remove("params");
    }
    notification
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc;

    fn listen(id: u64, filter: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
               "params": {"notifications": filter}})
    }

    fn changed(list: &str, tag: Option<u64>) -> Value {
        let mut n =
            json!({"jsonrpc": "2.0", "method": format!("notifications/{list}/list_changed")});
        if let Some(tag) = tag {
            n["params"] = json!({"_meta": {SUBSCRIPTION_ID: tag}});
        }
        n
    }

    fn stream() -> (Sink, mpsc::UnboundedReceiver<Vec<u8>>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Sink::single(tx), rx)
    }

    #[test]
    fn a_recorded_stream_gets_its_notifications_with_the_live_id() {
        let mut listeners = Listeners::default();
        let (sink, _rx) = stream();
        listeners.open_recorded(&json!(745), &listen(9, json!({})), &sink);
        let Route::Streams(streams) =
            listeners.route(&changed("tools", Some(745)), Translation::None)
        else {
            panic!("sent down the stream");
        };
        assert_eq!(streams.len(), 1);
        assert_eq!(streams[0].1["params"]["_meta"][SUBSCRIPTION_ID], json!(9));
        assert!(
            matches!(
                listeners.route(&changed("tools", Some(746)), Translation::None),
                Route::Dropped
            ),
            "a stream the client did not open gets nothing"
        );
        assert!(matches!(
            listeners.route(&changed("tools", None), Translation::None),
            Route::Here(_)
        ));
    }

    #[test]
    fn a_closed_stream_gets_nothing() {
        let mut listeners = Listeners::default();
        let (sink, rx) = stream();
        listeners.open_recorded(&json!(1), &listen(2, json!({})), &sink);
        drop(rx);
        assert!(matches!(
            listeners.route(&changed("tools", Some(1)), Translation::None),
            Route::Dropped
        ));
        assert!(listeners.open.is_empty());
    }

    #[test]
    fn a_legacy_recording_feeds_the_streams_whose_filter_accepts() {
        let mut listeners = Listeners::default();
        let capabilities = json!({"tools": {"listChanged": true}, "prompts": {},
                                  "resources": {"subscribe": true}});
        let (tools, _a) = stream();
        let ack = listeners.open_translated(
            &listen(
                5,
                json!({"toolsListChanged": true, "promptsListChanged": true,
                               "resourceSubscriptions": ["file:///a"]}),
            ),
            &capabilities,
            &tools,
        );
        assert_eq!(ack["method"], ACKNOWLEDGED);
        assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], json!(5));
        assert_eq!(
            ack["params"]["notifications"],
            json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]}),
            "prompts did not declare listChanged"
        );
        let Route::Streams(streams) =
            listeners.route(&changed("tools", None), Translation::ToModern)
        else {
            panic!("accepted");
        };
        assert_eq!(streams[0].1["params"]["_meta"][SUBSCRIPTION_ID], json!(5));
        assert!(matches!(
            listeners.route(&changed("prompts", None), Translation::ToModern),
            Route::Dropped
        ));
        let updated =
            |uri: &str| json!({"jsonrpc": "2.0", "method": UPDATED, "params": {"uri": uri}});
        assert!(matches!(
            listeners.route(&updated("file:///a"), Translation::ToModern),
            Route::Streams(_)
        ));
        assert!(matches!(
            listeners.route(&updated("file:///b"), Translation::ToModern),
            Route::Dropped
        ));
    }

    #[test]
    fn a_legacy_client_gets_untagged_notifications_and_its_subscriptions() {
        let mut listeners = Listeners::default();
        let Route::Here(plain) = listeners.route(&changed("tools", Some(3)), Translation::ToLegacy)
        else {
            panic!("sent to the session");
        };
        assert_eq!(plain, changed("tools", None));
        let ack = json!({"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": {"_meta": {SUBSCRIPTION_ID: 3}}});
        assert!(matches!(
            listeners.route(&ack, Translation::ToLegacy),
            Route::Dropped
        ));
        let updated = json!({"jsonrpc": "2.0", "method": UPDATED,
                             "params": {"uri": "file:///a", "_meta": {SUBSCRIPTION_ID: 3}}});
        assert!(matches!(
            listeners.route(&updated, Translation::ToLegacy),
            Route::Dropped
        ));
        let subscribe =
            json!({"id": 1, "method": "resources/subscribe", "params": {"uri": "file:///a"}});
        listeners.subscription(&subscribe, true);
        let Route::Here(sent) = listeners.route(&updated, Translation::ToLegacy) else {
            panic!("subscribed");
        };
        assert_eq!(sent["params"], json!({"uri": "file:///a"}));
        listeners.subscription(&subscribe, false);
        assert!(matches!(
            listeners.route(&updated, Translation::ToLegacy),
            Route::Dropped
        ));
    }

    #[test]
    fn only_change_notifications_concern_the_listeners() {
        assert!(concerns(&changed("prompts", None)));
        assert!(concerns(&json!({"method": ACKNOWLEDGED})));
        assert!(!concerns(&json!({"method": "notifications/progress"})));
        assert!(!concerns(&json!({"id": 1, "result": {}})));
    }
}
