//! Turns the two directions of a live session into interactions.
//!
//! The recorder feeds every message it forwards into a [`Builder`]; journal
//! recovery feeds the journal into one too, so a recovered cassette is built
//! by exactly the code that builds a normal one.
//!
//! This file holds the builder's state and how it keeps an interaction;
//! its children do the work: `pairing` pairs client messages with the
//! server's answers and settles interactions, `filing` decides which
//! interaction a server message belongs to, `finish` hands the recording
//! over, `describe` reads the protocol and server off its handshake.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::Path;
use std::time::Duration;

use super::format::{Event, EventRef, HttpExchange, Interaction, Transport};
use super::spill::Interactions;

mod describe;
mod filing;
mod finish;
mod pairing;

pub use describe::describe;
pub use finish::{Finished, InteractionStream};

/// Which way a message travelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Direction {
    /// From the client to the server.
    #[serde(rename = "c2s")]
    ClientToServer,
    /// From the server to the client.
    #[serde(rename = "s2c")]
    ServerToClient,
}

impl Direction {
    /// The other way.
    pub fn reverse(self) -> Direction {
        match self {
            Direction::ClientToServer => Direction::ServerToClient,
            Direction::ServerToClient => Direction::ClientToServer,
        }
    }
}

/// Where an event was filed, so the client's answer to a server request can
/// find it later.
#[derive(Debug, Clone, Copy)]
enum Place {
    Opening(usize),
    During(usize, usize),
    After(usize, usize),
}

/// How many (notification, request) pairings the builder keeps for
/// notifications waiting for the next answer ([`Undecided`]): one held
/// while k requests are in flight takes k. Past it, the oldest are filed
/// by the fallback rule, so that a server that logs on and on while
/// requests go unanswered is recorded in bounded memory.
const UNDECIDED_LIMIT: usize = 1024;

/// A server notification that came over stdio, tied to no request, while
/// several were in flight: it goes to the one of them answered next,
/// which replay plays it just before, so the client sees it where the
/// recording did relative to the answers. If none of them is answered
/// (the recording ends, they are cancelled), or it waits past
/// [`UNDECIDED_LIMIT`], it goes to the most recent of them.
#[derive(Debug)]
struct Undecided {
    notification: Event,
    /// The requests in flight when it came, oldest first, each with the
    /// length its `during` had then: where the notification goes in it.
    candidates: Vec<(usize, usize)>,
    /// When it came, in a timed session.
    at: Option<Duration>,
}

/// Builds a [`Cassette`](super::Cassette) from observed messages, pairing requests and
/// responses by id with any number in flight.
#[derive(Debug)]
pub struct Builder {
    recorded_at: String,
    transport: Transport,
    opening: Vec<Event>,
    interactions: Interactions,
    /// Server requests still waiting for the client's answer, by the
    /// interaction they were filed under: it cannot settle before.
    waiting: HashMap<usize, usize>,
    /// Authentication challenges already settled (and dropped).
    dropped_challenges: usize,
    /// Settled interactions `describe` may need: the first successful
    /// handshake, the first request that declares a protocol version.
    described: BTreeMap<usize, Interaction>,
    /// Client request id → interaction indices, while unanswered: more
    /// than one when a client reuses an id before its answer came, paired
    /// in order.
    in_flight: InFlight,
    /// Indices of unanswered requests; the largest is the most recent.
    open: BTreeSet<usize>,
    /// Progress token → interaction index, while its request is unanswered.
    progress: HashMap<String, usize>,
    /// Server request id → where that request was filed.
    server_requests: HashMap<String, Place>,
    /// The most recent client message.
    last_client: Option<usize>,
    /// Where the last server message was filed, when under an interaction.
    last_filed: Option<(usize, EventRef)>,
    /// When each unsettled client message was seen, for timed observations.
    client_at: HashMap<usize, Duration>,
    /// Interactions the recorder still revises ([`Builder::hold`]): they
    /// cannot settle before they are released.
    held: HashSet<usize>,
    /// Notifications waiting for the next answer to say which request
    /// they go to, oldest first.
    undecided: VecDeque<Undecided>,
    /// The candidates of all `undecided` together, at most
    /// [`UNDECIDED_LIMIT`].
    undecided_slots: usize,
    /// How many `undecided` may go to each interaction: it cannot settle
    /// before they are filed.
    pinned: HashMap<usize, usize>,
    /// When the message being filed was seen, if it was timed.
    now: Option<Duration>,
    /// Over HTTP, the interaction whose POST's SSE stream carries the
    /// messages being filed ([`Builder::observe_on_stream`]).
    stream_of: Option<usize>,
}

/// Unanswered client requests by id.
#[derive(Debug, Default)]
struct InFlight(HashMap<String, VecDeque<usize>>);

impl InFlight {
    /// Notes request `index` under `id`; true if another with that id is
    /// still in flight.
    fn insert(&mut self, id: String, index: usize) -> bool {
        let waiting = self.0.entry(id).or_default();
        waiting.push_back(index);
        waiting.len() > 1
    }

    /// Request `index` is no longer in flight, whatever its id; true if
    /// it was.
    fn remove_index(&mut self, index: usize) -> bool {
        let mut found = false;
        self.0.retain(|_, waiting| {
            if let Some(at) = waiting.iter().position(|&i| i == index) {
                waiting.remove(at);
                found = true;
            }
            !waiting.is_empty()
        });
        found
    }

    /// The oldest unanswered request with `id`, which is no longer in
    /// flight.
    fn take(&mut self, id: &str) -> Option<usize> {
        let waiting = self.0.get_mut(id)?;
        let index = waiting.pop_front();
        if waiting.is_empty() {
            self.0.remove(id);
        }
        index
    }
}

/// The current time in UTC, RFC 3339, to the second: a recording's
/// `recorded_at`.
pub fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    let now = now.replace_nanosecond(0).unwrap_or(now);
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

impl Builder {
    /// A builder for a session that started at `recorded_at`.
    pub fn new(recorded_at: String, transport: Transport) -> Self {
        Builder {
            recorded_at,
            transport,
            opening: Vec::new(),
            interactions: Interactions::default(),
            waiting: HashMap::new(),
            dropped_challenges: 0,
            described: BTreeMap::new(),
            in_flight: InFlight::default(),
            open: BTreeSet::new(),
            progress: HashMap::new(),
            server_requests: HashMap::new(),
            last_client: None,
            last_filed: None,
            client_at: HashMap::new(),
            held: HashSet::new(),
            undecided: VecDeque::new(),
            undecided_slots: 0,
            pinned: HashMap::new(),
            now: None,
            stream_of: None,
        }
    }

    /// A builder whose settled interactions leave memory for a spill file
    /// in `dir` (an unnamed temporary file), so that a session of any
    /// length is built in the memory of what is in flight. Its cassette is
    /// written with [`Finished::save`].
    pub fn spill_in(&mut self, dir: &Path) -> std::io::Result<()> {
        self.interactions.spill_in(dir)
    }

    /// [`spill_in`](Self::spill_in) the folder `file` (the cassette, its
    /// journal) is in.
    pub fn spill_beside(&mut self, file: &Path) -> std::io::Result<()> {
        self.spill_in(super::save::folder_of(file))
    }

    /// The transport the session is recorded over.
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// Interactions whose request is answered, or which are notifications.
    pub fn completed(&self) -> usize {
        let challenges = self
            .interactions
            .live()
            .filter(|(_, interaction)| is_challenge(interaction))
            .count()
            + self.dropped_challenges;
        (self.interactions.len() - self.open.len()).saturating_sub(challenges)
    }

    /// The index the next client request or notification will get: compare
    /// before and after [`observe`](Self::observe) to learn which
    /// interaction a client message opened.
    pub fn next_interaction(&self) -> usize {
        self.interactions.len()
    }

    /// Where the last server notification or request was filed: which
    /// interaction, and which of its messages (`None` for one filed before
    /// any client message, or one waiting for the next answer, which only
    /// happens over stdio). The HTTP recorder notes there that it came on
    /// the GET stream.
    pub fn last_filed(&self) -> Option<(usize, EventRef)> {
        self.last_filed
    }

    /// The HTTP exchange of interaction `index`, created empty on first
    /// use; `None` if there is no such interaction. The HTTP recorder fills
    /// it in as the answer arrives.
    pub fn http_mut(&mut self, index: usize) -> Option<&mut HttpExchange> {
        let interaction = self.interactions.get_mut(index)?;
        Some(interaction.http.get_or_insert_default())
    }
}

/// An interaction as the cassette keeps it, or `None` for one it drops.
/// Idempotent: applied once to each, wherever it was kept.
fn prepare(mut interaction: Interaction) -> Option<Interaction> {
    // A client answered 401 retries with a token: the retry is what
    // replays, and the challenge is in the transport's `auth`.
    if is_challenge(&interaction) {
        return None;
    }
    // Timing matters between messages: a lone response keeps none, so
    // that re-recording a plain exchange changes nothing in the file.
    let messages = interaction.during.len() + usize::from(interaction.response.is_some());
    if interaction.during.is_empty() || interaction.delays_ms.len() != messages {
        interaction.delays_ms.clear();
    }
    Some(interaction)
}

/// Whether an interaction's answer was an authentication challenge.
fn is_challenge(interaction: &Interaction) -> bool {
    interaction
        .http
        .as_ref()
        .is_some_and(|http| http.auth_challenge)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::format::ProtocolInfo;
    use crate::protocol::{self, Era};
    use Direction::{ClientToServer as C2S, ServerToClient as S2C};
    use serde_json::Value;
    use serde_json::json;

    fn builder() -> Builder {
        Builder::new(
            "2026-01-01T00:00:00Z".into(),
            Transport::Stdio {
                command: vec![],
                cwd: None,
            },
        )
    }

    #[test]
    fn requests_that_share_an_id_are_answered_in_order() {
        let mut b = builder();
        b.observe(C2S, json!({"jsonrpc": "2.0", "id": 1, "method": "a"}));
        b.observe(C2S, json!({"jsonrpc": "2.0", "id": 1, "method": "b"}));
        b.observe(
            S2C,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"for": "a"}}),
        );
        b.observe(
            S2C,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"for": "b"}}),
        );
        assert_eq!(b.completed(), 2);
        let cassette = b.finish();
        let answered =
            |n: usize| cassette.interactions[n].response.as_ref().unwrap()["result"]["for"].clone();
        assert_eq!((answered(0), answered(1)), (json!("a"), json!("b")));
    }

    #[test]
    fn a_rejection_is_filed_as_the_answer_to_the_request_it_names() {
        let mut b = builder();
        b.observe(C2S, json!({"jsonrpc": "2.0", "id": 1, "method": "a"}));
        b.observe(C2S, json!({"jsonrpc": "2.0", "id": 2, "method": "b"}));
        let rejection = json!({"jsonrpc": "2.0", "id": null,
            "error": {"code": -32000, "message": "no session id"}});
        b.respond_to(&json!(2), rejection.clone());
        assert_eq!(b.completed(), 1);
        let cassette = b.finish();
        assert_eq!(cassette.interactions[1].response, Some(rejection.into()));
        assert_eq!(cassette.interactions[0].response, None);
    }

    #[test]
    fn pairs_out_of_order_answers_by_id() {
        let mut b = builder();
        b.observe(C2S, json!({"jsonrpc": "2.0", "id": 1, "method": "a"}));
        b.observe(C2S, json!({"jsonrpc": "2.0", "id": 2, "method": "b"}));
        b.observe(
            S2C,
            json!({"jsonrpc": "2.0", "id": 2, "result": {"b": true}}),
        );
        assert_eq!(b.completed(), 1);
        b.observe(
            S2C,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"a": true}}),
        );
        let c = b.finish();
        assert_eq!(
            c.interactions[0].response.as_ref().unwrap()["result"],
            json!({"a": true})
        );
        assert_eq!(
            c.interactions[1].response.as_ref().unwrap()["result"],
            json!({"b": true})
        );
    }

    #[test]
    fn progress_goes_to_the_request_that_owns_the_token() {
        let mut b = builder();
        let meta = |t: &str| json!({"_meta": {"progressToken": t}});
        b.observe(
            C2S,
            json!({"jsonrpc": "2.0", "id": 1, "method": "a", "params": meta("t1")}),
        );
        b.observe(
            C2S,
            json!({"jsonrpc": "2.0", "id": 2, "method": "b", "params": meta("t2")}),
        );
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t1", "progress": 1}});
        b.observe(S2C, progress.clone());
        b.observe(
            S2C,
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}),
        );
        let c = b.finish();
        assert_eq!(
            c.interactions[0].during,
            vec![Event::Notification {
                notification: progress.into()
            }]
        );
        assert_eq!(
            c.interactions[1].during.len(),
            1,
            "unowned traffic goes to the newest request"
        );
    }

    #[test]
    fn server_requests_get_the_clients_answer() {
        let mut b = builder();
        b.observe(
            C2S,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}),
        );
        b.observe(
            S2C,
            json!({"jsonrpc": "2.0", "id": 0, "method": "roots/list"}),
        );
        b.observe(
            C2S,
            json!({"jsonrpc": "2.0", "id": 0, "result": {"roots": []}}),
        );
        b.observe(S2C, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        let c = b.finish();
        let Event::ServerRequest {
            client_response, ..
        } = &c.interactions[0].during[0]
        else {
            panic!("expected a server request")
        };
        assert_eq!(
            client_response.as_ref().unwrap()["result"],
            json!({"roots": []})
        );
    }

    #[test]
    fn unprompted_traffic_follows_the_last_client_message() {
        let mut b = builder();
        b.observe(
            S2C,
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}),
        );
        b.observe(
            C2S,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        b.observe(
            S2C,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        );
        let c = b.finish();
        assert_eq!(c.opening.len(), 1);
        assert_eq!(c.interactions[0].after.len(), 1);
    }

    #[test]
    fn a_listen_stream_owns_its_acknowledgement_and_its_changes_their_cause() {
        let mut b = builder();
        let meta = |id: u64| json!({"_meta": {"io.modelcontextprotocol/subscriptionId": id}});
        b.observe(
            C2S,
            json!({"jsonrpc": "2.0", "id": 70, "method": "subscriptions/listen", "params": {}}),
        );
        let ack = "notifications/subscriptions/acknowledged";
        b.observe(
            S2C,
            json!({"jsonrpc": "2.0", "method": ack, "params": meta(70)}),
        );
        b.observe(
            C2S,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "change"}}),
        );
        let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": meta(70)});
        b.observe(S2C, changed.clone());
        b.observe(S2C, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        // The change overtaken by the answer to the call that caused it.
        b.observe(
            C2S,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "change"}}),
        );
        b.observe(S2C, json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
        b.observe(S2C, changed.clone());
        let c = b.finish();
        assert_eq!(
            c.interactions[0].during.len(),
            1,
            "only the acknowledgement"
        );
        assert_eq!(
            c.interactions[1].during.len(),
            1,
            "caused by the first call"
        );
        assert_eq!(
            c.interactions[2].after.len(),
            1,
            "caused by the second call"
        );
        assert!(
            c.interactions[0].response.is_none(),
            "the stream stays open"
        );
    }

    #[test]
    fn over_http_a_change_after_its_causes_answer_is_kept_with_its_cause() {
        let mut b = Builder::new(
            String::new(),
            Transport::StreamableHttp {
                url: "http://127.0.0.1:1/mcp".into(),
                endpoint: "/mcp".into(),
                behaviour: Default::default(),
            },
        );
        let meta = json!({"_meta": {"io.modelcontextprotocol/subscriptionId": 70}});
        b.observe(
            C2S,
            json!({"jsonrpc": "2.0", "id": 70, "method": "subscriptions/listen", "params": {}}),
        );
        b.observe(
            C2S,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}),
        );
        b.observe(S2C, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        b.observe(
            S2C,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": meta}),
        );
        let c = b.finish();
        assert_eq!(c.interactions[1].during.len(), 1);
        assert!(c.interactions[1].after.is_empty());
    }

    fn call(id: u64) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": format!("t{id}")}})
    }

    fn answer(id: u64) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}})
    }

    fn log(n: u64) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": n}})
    }

    fn cancel(id: u64) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}})
    }

    fn logs(events: &[Event]) -> Vec<u64> {
        events
            .iter()
            .filter_map(|event| match event {
                Event::Notification { notification } => {
                    notification.get("params")?["data"].as_u64()
                }
                Event::ServerRequest { .. } => None,
            })
            .collect()
    }

    #[test]
    fn an_untied_log_with_two_calls_in_flight_goes_to_the_call_answered_next() {
        let mut b = builder();
        b.observe(C2S, call(1));
        b.observe(C2S, call(2));
        b.observe(S2C, log(7));
        b.observe(S2C, answer(1));
        b.observe(S2C, answer(2));
        let c = b.finish();
        assert_eq!(logs(&c.interactions[0].during), vec![7], "answered next");
        assert!(c.interactions[1].during.is_empty());
    }

    #[test]
    fn answered_the_other_way_round_the_log_goes_to_the_other_call() {
        let mut b = builder();
        b.observe(C2S, call(1));
        b.observe(C2S, call(2));
        b.observe(S2C, log(7));
        b.observe(S2C, answer(2));
        b.observe(S2C, answer(1));
        let c = b.finish();
        assert!(c.interactions[0].during.is_empty());
        assert_eq!(logs(&c.interactions[1].during), vec![7], "answered next");
    }

    #[test]
    fn with_one_call_in_flight_a_log_is_its_own() {
        let mut b = builder();
        b.observe(C2S, call(1));
        b.observe(S2C, log(7));
        // Sent after the log: not a candidate, even answered first.
        b.observe(C2S, call(2));
        b.observe(S2C, answer(2));
        b.observe(S2C, answer(1));
        let c = b.finish();
        assert_eq!(logs(&c.interactions[0].during), vec![7]);
        assert!(c.interactions[1].during.is_empty());
    }

    #[test]
    fn a_log_no_call_in_flight_answers_goes_to_the_most_recent() {
        let mut b = builder();
        b.observe(C2S, call(1));
        b.observe(C2S, call(2));
        b.observe(S2C, log(7));
        let c = b.finish();
        assert!(c.interactions[0].during.is_empty());
        assert_eq!(logs(&c.interactions[1].during), vec![7], "today's rule");

        // Both cancelled: decided then, by the same rule.
        let mut b = builder();
        b.observe(C2S, call(1));
        b.observe(C2S, call(2));
        b.observe(S2C, log(7));
        b.observe(C2S, cancel(2));
        b.observe(C2S, cancel(1));
        b.observe(C2S, call(3));
        b.observe(S2C, answer(3));
        let c = b.finish();
        assert_eq!(logs(&c.interactions[1].during), vec![7]);
        assert!(
            c.interactions[4].during.is_empty(),
            "not in flight when it came"
        );
    }

    #[test]
    fn progress_with_a_token_is_unaffected_and_keeps_its_place_after_a_waiting_log() {
        let mut b = builder();
        let with_token = |id: u64| {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "t", "_meta": {"progressToken": format!("p{id}")}}})
        };
        let progress = |id: u64| {
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": format!("p{id}"), "progress": id}})
        };
        b.observe(C2S, with_token(1));
        b.observe(C2S, with_token(2));
        b.observe(S2C, log(7));
        b.observe(S2C, progress(2));
        b.observe(S2C, progress(1));
        b.observe(S2C, answer(1));
        b.observe(S2C, answer(2));
        let c = b.finish();
        let methods = |n: usize| -> Vec<String> {
            c.interactions[n]
                .during
                .iter()
                .map(|event| match event {
                    Event::Notification { notification } => {
                        notification["method"].as_str().unwrap().to_owned()
                    }
                    Event::ServerRequest { .. } => "request".to_owned(),
                })
                .collect()
        };
        assert_eq!(
            methods(0),
            ["notifications/message", "notifications/progress"],
            "in the order they came"
        );
        assert_eq!(methods(1), ["notifications/progress"]);
    }

    #[test]
    fn a_waiting_log_is_timed_from_the_start_of_the_call_it_goes_to() {
        let mut b = builder();
        let ms = Duration::from_millis;
        let with_token = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "t", "_meta": {"progressToken": "p"}}});
        b.observe_at(C2S, with_token, ms(100));
        b.observe_at(C2S, call(2), ms(110));
        b.observe_at(S2C, log(7), ms(130));
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "p", "progress": 1}});
        b.observe_at(S2C, progress, ms(140));
        b.observe_at(S2C, log(8), ms(145));
        b.observe_at(S2C, answer(1), ms(150));
        b.observe_at(S2C, answer(2), ms(190));
        let c = b.finish();
        assert_eq!(logs(&c.interactions[0].during), vec![7, 8]);
        assert_eq!(c.interactions[0].during.len(), 3);
        assert_eq!(c.interactions[0].delays_ms, vec![30, 40, 45, 50]);
        assert!(c.interactions[1].delays_ms.is_empty(), "a lone response");
    }

    #[test]
    fn a_server_request_filed_while_a_log_waits_keeps_the_clients_answer() {
        let mut b = builder();
        b.observe(C2S, call(1));
        b.observe(C2S, call(2));
        b.observe(S2C, log(7));
        b.observe(
            S2C,
            json!({"jsonrpc": "2.0", "id": "s", "method": "roots/list"}),
        );
        b.observe(S2C, answer(2));
        b.observe(
            C2S,
            json!({"jsonrpc": "2.0", "id": "s", "result": {"roots": []}}),
        );
        b.observe(S2C, answer(1));
        let c = b.finish();
        assert_eq!(logs(&c.interactions[1].during), vec![7]);
        let Event::ServerRequest {
            client_response, ..
        } = &c.interactions[1].during[1]
        else {
            panic!("the log first, then the server request")
        };
        assert_eq!(
            client_response.as_ref().unwrap()["result"],
            json!({"roots": []})
        );
    }

    #[test]
    fn a_change_on_a_listen_stream_goes_to_the_call_answered_next() {
        let mut b = builder();
        b.observe(
            C2S,
            json!({"jsonrpc": "2.0", "id": 70, "method": "subscriptions/listen", "params": {}}),
        );
        b.observe(C2S, call(1));
        b.observe(C2S, call(2));
        b.observe(
            S2C,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 70}}}),
        );
        b.observe(S2C, answer(1));
        b.observe(S2C, answer(2));
        let c = b.finish();
        assert_eq!(c.interactions[1].during.len(), 1);
        assert!(c.interactions[2].during.is_empty());
    }

    #[test]
    fn over_http_an_untied_log_still_goes_to_the_most_recent_call() {
        let mut b = Builder::new(
            String::new(),
            Transport::StreamableHttp {
                url: "http://127.0.0.1:1/mcp".into(),
                endpoint: "/mcp".into(),
                behaviour: Default::default(),
            },
        );
        b.observe(C2S, call(1));
        b.observe(C2S, call(2));
        b.observe(S2C, log(7));
        assert_eq!(b.last_filed().map(|(n, _)| n), Some(1), "filed at once");
        b.observe(S2C, answer(1));
        b.observe(S2C, answer(2));
        let c = b.finish();
        assert_eq!(logs(&c.interactions[1].during), vec![7]);
    }

    #[test]
    fn over_http_a_log_on_a_posts_stream_is_that_posts_whatever_else_is_in_flight() {
        let mut b = Builder::new(
            String::new(),
            Transport::StreamableHttp {
                url: "http://127.0.0.1:1/mcp".into(),
                endpoint: "/mcp".into(),
                behaviour: Default::default(),
            },
        );
        b.observe(C2S, call(1));
        b.observe(C2S, call(2));
        // The first call's stream carries a log while the second is the
        // most recent in flight.
        b.observe_on_stream(Some(0), log(7));
        assert_eq!(b.last_filed().map(|(n, _)| n), Some(0));
        // A stream whose request was answered already ties nothing.
        b.observe(S2C, answer(1));
        b.observe_on_stream(Some(0), log(8));
        b.observe(S2C, answer(2));
        let c = b.finish();
        assert_eq!(logs(&c.interactions[0].during), vec![7]);
        assert_eq!(logs(&c.interactions[1].during), vec![8]);
    }

    #[test]
    fn untied_logs_for_calls_never_answered_are_held_in_bounded_memory() {
        let mut b = builder();
        b.observe(C2S, call(1));
        b.observe(C2S, call(2));
        let many = 3 * UNDECIDED_LIMIT as u64;
        for n in 0..many {
            b.observe(S2C, log(n));
            assert!(b.undecided_slots <= UNDECIDED_LIMIT);
        }
        let held = b.undecided.len() as u64;
        assert_eq!(held, (UNDECIDED_LIMIT / 2) as u64, "two calls each");
        b.observe(S2C, answer(1));
        let c = b.finish();
        // The oldest went by the fallback rule; those still held, to the
        // call answered.
        let (fallen, answered) = (
            logs(&c.interactions[1].during),
            logs(&c.interactions[0].during),
        );
        assert_eq!(fallen.len() as u64, many - held);
        assert_eq!(answered.len() as u64, held);
        assert!(
            fallen.iter().chain(&answered).copied().eq(0..many),
            "in order"
        );
    }

    #[test]
    fn a_spilling_builder_keeps_the_calls_a_waiting_log_may_go_to() {
        let dir = tempfile::tempdir().unwrap();
        let (mut kept, mut spilled) = (builder(), builder());
        spilled.spill_in(dir.path()).unwrap();
        let session = [
            (C2S, call(1)),
            (C2S, call(2)),
            (S2C, log(7)),
            (C2S, cancel(2)),
            (C2S, call(3)),
            (S2C, answer(3)),
            (C2S, call(4)),
            (S2C, answer(4)),
            (S2C, log(8)),
            (C2S, call(5)),
            (S2C, answer(5)),
        ];
        for (direction, message) in session {
            kept.observe(direction, message.clone());
            spilled.observe(direction, message);
        }
        let expected = kept.finish();
        assert_eq!(logs(&expected.interactions[1].during), vec![7]);
        assert_eq!(logs(&expected.interactions[0].during), vec![8]);
        let path = dir.path().join("c.json");
        assert!(spilled.finish_streamed().save(&path).unwrap());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            super::super::to_text(&expected)
        );
    }

    #[test]
    fn cancelled_requests_stay_without_response() {
        let mut b = builder();
        b.observe(
            C2S,
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call"}),
        );
        b.observe(C2S, json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}));
        b.observe(S2C, json!({"jsonrpc": "2.0", "id": 7, "result": {}}));
        assert_eq!(b.completed(), 2);
        let c = b.finish();
        assert!(c.interactions[0].response.is_none());
    }

    #[test]
    fn timed_sessions_keep_the_delays_of_interactions_with_traffic_during() {
        let mut b = builder();
        let ms = Duration::from_millis;
        let meta = json!({"_meta": {"progressToken": "p"}});
        b.observe_at(
            C2S,
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            ms(5),
        );
        b.observe_at(S2C, json!({"jsonrpc": "2.0", "id": 1, "result": {}}), ms(7));
        b.observe_at(
            C2S,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": meta}),
            ms(10),
        );
        let progress = |n: u64| json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p", "progress": n}});
        b.observe_at(S2C, progress(1), ms(30));
        b.observe_at(S2C, progress(2), ms(60));
        b.observe_at(
            S2C,
            json!({"jsonrpc": "2.0", "id": 2, "result": {}}),
            ms(75),
        );
        b.observe_at(
            S2C,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            ms(90),
        );
        let c = b.finish();
        assert!(c.interactions[0].delays_ms.is_empty(), "a lone response");
        assert_eq!(c.interactions[1].delays_ms, vec![20, 50, 65]);
        assert_eq!(c.interactions[1].after.len(), 1);
    }

    #[test]
    fn untimed_sessions_keep_no_delays() {
        let mut b = builder();
        b.observe(C2S, json!({"jsonrpc": "2.0", "id": 1, "method": "a"}));
        b.observe(
            S2C,
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}),
        );
        b.observe(S2C, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        assert!(b.finish().interactions[0].delays_ms.is_empty());
    }

    #[test]
    fn handshake_sets_era_version_and_identity() {
        let mut b = builder();
        b.observe(C2S, json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}));
        b.observe(S2C, json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18", "serverInfo": {"name": "s"}, "capabilities": {"tools": {}}}}));
        let c = b.finish();
        assert_eq!(
            c.protocol,
            ProtocolInfo {
                era: Era::Legacy,
                version: Some("2025-06-18".into())
            }
        );
        assert_eq!(c.server.unwrap().info, json!({"name": "s"}));
    }

    #[test]
    fn discover_makes_a_modern_cassette() {
        let mut b = builder();
        let meta = json!({"_meta": {protocol::META_PROTOCOL_VERSION: "2026-07-28"}});
        b.observe(
            C2S,
            json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": meta}),
        );
        let server_info = json!({"name": "modern"});
        b.observe(S2C, json!({"jsonrpc": "2.0", "id": 0, "result": {"supportedVersions": ["2026-07-28"], "capabilities": {}, "_meta": {protocol::META_SERVER_INFO: server_info}}}));
        let c = b.finish();
        assert_eq!(c.protocol.era, Era::Modern);
        assert_eq!(c.protocol.version.as_deref(), Some("2026-07-28"));
        assert_eq!(c.server.unwrap().info, server_info);
    }

    /// A session with what pairing has to get right: answers out of order,
    /// progress, a server request answered later, a cancelled request,
    /// unprompted traffic after a notification, a long-open request.
    fn session() -> Vec<(Direction, Value)> {
        let mut session = vec![
            (
                C2S,
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25"}}),
            ),
            (
                S2C,
                json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
                "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}}),
            ),
            (
                C2S,
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            ),
            (
                S2C,
                json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            ),
            (
                C2S,
                json!({"jsonrpc": "2.0", "id": "long", "method": "tools/call",
                "params": {"name": "wait"}}),
            ),
        ];
        for n in 1..200 {
            session.push((
                C2S,
                json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"n": n},
                    "_meta": {"progressToken": format!("p{n}")}}}),
            ));
            if n % 3 == 0 {
                session.push((
                    S2C,
                    json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": format!("p{n}"), "progress": 1}}),
                ));
            }
            if n % 10 == 0 {
                session.push((
                    S2C,
                    json!({"jsonrpc": "2.0", "id": format!("s{n}"),
                    "method": "roots/list"}),
                ));
            }
            if n % 10 == 2 {
                session.push((
                    C2S,
                    json!({"jsonrpc": "2.0", "id": format!("s{}", n - 2),
                    "result": {"roots": []}}),
                ));
            }
            // Answered one request late, so two are always in flight.
            if n > 1 && (n - 1) % 7 != 0 {
                session.push((
                    S2C,
                    json!({"jsonrpc": "2.0", "id": n - 1,
                    "result": {"content": [{"type": "text", "text": format!("{}", n - 1)}]}}),
                ));
            }
            if n % 7 == 0 {
                session.push((
                    C2S,
                    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": n}}),
                ));
            }
        }
        session
    }

    #[test]
    fn a_spilling_builder_builds_the_same_cassette_in_little_memory() {
        let dir = tempfile::tempdir().unwrap();
        let (mut kept, mut spilled) = (builder(), builder());
        spilled.spill_in(dir.path()).unwrap();
        let mut most_in_memory = 0;
        for (direction, message) in session() {
            kept.observe(direction, message.clone());
            spilled.observe(direction, message);
            most_in_memory = most_in_memory.max(spilled.interactions.live().count());
        }
        assert_eq!(spilled.completed(), kept.completed());
        assert!(
            most_in_memory <= 6,
            "{most_in_memory} interactions in memory at once"
        );
        let expected = kept.finish();
        assert_eq!(expected.protocol.version.as_deref(), Some("2025-11-25"));
        assert!(expected.interactions.len() > 200);
        let path = dir.path().join("c.json");
        assert!(spilled.finish_streamed().save(&path).unwrap());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            super::super::to_text(&expected)
        );
    }

    #[test]
    fn a_held_interaction_stays_in_memory_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let mut builder = builder();
        builder.spill_in(dir.path()).unwrap();
        let call = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
        let answer = |id: u64| json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}});
        builder.observe(C2S, call(1));
        builder.hold(0);
        builder.observe(S2C, answer(1));
        builder.observe(C2S, call(2));
        builder.observe(S2C, answer(2));
        builder.observe(C2S, call(3));
        // Answered and followed, 1 would have settled; 0 is held.
        assert!(builder.http_mut(1).is_none(), "not held: settled");
        builder.http_mut(0).expect("held: still revisable").status = 200;
        assert!(builder.release(0));
        assert!(!builder.release(0), "released once");
        assert!(builder.http_mut(0).is_none(), "released: settled");
        let cassette = builder.finish();
        assert_eq!(cassette.interactions.len(), 3);
        assert_eq!(
            cassette.interactions[0].http.as_ref().map(|h| h.status),
            Some(200)
        );
    }

    #[test]
    fn a_saved_recording_with_nothing_in_it_keeps_the_cassette_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        std::fs::write(&path, "before").unwrap();
        let mut empty = builder();
        empty.spill_in(dir.path()).unwrap();
        assert!(!empty.finish_streamed().save(&path).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "before");
    }
}
