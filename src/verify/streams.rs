//! What Streamable HTTP orders, and no more. A server's messages for a
//! request travel on that request's stream (its SSE answer), in order; the
//! messages on the server's own stream (GET) are in order among themselves;
//! nothing orders one stream against another, nor the GET stream against
//! the requests. So a live session whose messages interleave differently
//! from the recording's (logs on the GET stream, progress on the POST
//! stream, as the TypeScript SDK's server sends them) has not drifted.
//!
//! [`align`] puts the live server's messages into the recording's
//! interleaving wherever that keeps the order within each stream: then
//! comparing ([`super::compare`]) sees only what the protocol orders. The
//! recording does not say which stream each message came on; the live
//! session does ([`HttpLive::server_stream`](crate::client::HttpLive::server_stream)), and the
//! recording is read as any interleaving of the live streams that fits.
//!
//! The GET stream is read across the session: a message on it may land
//! beside another request live than when recorded (it is filed under the
//! request in flight when it arrives), so each interaction gets as many of
//! the GET stream's messages, in order, as the recording has there besides
//! the answer's own. When the live server sent more or fewer messages than
//! that adds up to, each interaction keeps the GET-stream messages that
//! came during it instead. Where no interleaving fits, the messages are
//! placed as close to the recording's as the order within each stream
//! allows, and the comparison shows what drifted.

use serde_json::Value;

use super::compare::comparable;
use crate::cassette::NormalizeRule;
use crate::cassette::{Cassette, Event, Interaction};

/// Where one message of an interaction came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// The request's own stream.
    Answer,
    /// The server's own stream (GET).
    Server,
}

/// Reorders the server messages of `observed` (a live run of `recorded`'s
/// client side) into the recording's interleaving where the order within
/// each stream allows it. `server_stream` is what came on the GET stream,
/// in order, masked as `observed` is; messages are compared as the drift
/// report compares them (without ids, after `rules`). Returns how many
/// interactions were reordered.
pub(super) fn align(
    recorded: &Cassette,
    observed: &mut Cassette,
    server_stream: &[Value],
    rules: &[NormalizeRule],
) -> usize {
    if server_stream.is_empty() {
        return 0;
    }
    let split = Split::of(observed, server_stream, rules);
    let wanted: Vec<Vec<Value>> = recorded
        .interactions
        .iter()
        .map(|i| events(i).map(|e| comparable(message(e), rules)).collect())
        .collect();
    let plans = match across_session(&wanted, &split) {
        Some(plans) => plans,
        None => by_interaction(&wanted, &split),
    };
    let mut reordered = 0;
    for (index, plan) in plans.into_iter().enumerate() {
        let Some(plan) = plan else { continue };
        let interaction = &mut observed.interactions[index];
        let before: Vec<Event> = events(interaction).cloned().collect();
        let after: Vec<Event> = plan
            .iter()
            .map(|&(slot, at)| split.event(slot, index, at))
            .collect();
        if after == before {
            continue;
        }
        let during = recorded.interactions[index].during.len().min(after.len());
        let mut after = after;
        interaction.after = after.split_off(during);
        interaction.during = after;
        reordered += 1;
    }
    reordered
}

/// Where each event of an interaction comes from: a stream, and the
/// position in it (an answer event's within its interaction; a GET-stream
/// event's within the session, or within its interaction when aligning
/// interaction by interaction).
type Plan = Vec<(Slot, usize)>;

/// The live server messages, told apart by stream.
struct Split {
    /// Per interaction, the messages that came in answers, as events and as
    /// compared.
    answers: Vec<Vec<(Event, Value)>>,
    /// The GET-stream messages of the whole session, in order.
    server: Vec<(Event, Value)>,
    /// Where each interaction's GET-stream messages start in `server`.
    server_start: Vec<usize>,
}

impl Split {
    fn of(observed: &Cassette, server_stream: &[Value], rules: &[NormalizeRule]) -> Split {
        let mut next = 0;
        let mut split = Split {
            answers: Vec::new(),
            server: Vec::new(),
            server_start: Vec::new(),
        };
        for interaction in &observed.interactions {
            split.server_start.push(split.server.len());
            let mut answers = Vec::new();
            for event in events(interaction) {
                let entry = (event.clone(), comparable(message(event), rules));
                // GET-stream messages arrive in order; a message equal to the
                // next one expected is taken for it (were it really the
                // answer's, the two are equal, so the order is the same).
                if server_stream.get(next) == Some(message(event)) {
                    next += 1;
                    split.server.push(entry);
                } else {
                    answers.push(entry);
                }
            }
            split.answers.push(answers);
        }
        split.server_start.push(split.server.len());
        split
    }

    /// The GET-stream messages filed under interaction `index`.
    fn server_of(&self, index: usize) -> &[(Event, Value)] {
        &self.server[self.server_start[index]..self.server_start[index + 1]]
    }

    fn event(&self, slot: Slot, index: usize, at: usize) -> Event {
        match slot {
            Slot::Answer => self.answers[index][at].0.clone(),
            Slot::Server => self.server[at].0.clone(),
        }
    }
}

/// The GET stream read across the session: each interaction gets as many
/// of its messages, in order, as the recording has beside the answer's
/// own, placed in the recording's interleaving where that fits (else as
/// close to it as the order within each stream allows, so the drift shows
/// where it is). `None` when the counts do not add up: then the live
/// server sent more or fewer messages, and each stays where it came.
fn across_session(wanted: &[Vec<Value>], split: &Split) -> Option<Vec<Option<Plan>>> {
    if wanted.len() != split.answers.len() {
        return None;
    }
    let mut plans = Vec::with_capacity(wanted.len());
    let mut taken = 0;
    for (wanted, answers) in wanted.iter().zip(&split.answers) {
        let from_server = wanted.len().checked_sub(answers.len())?;
        let server = split.server.get(taken..taken + from_server)?;
        let slots = interleaving(wanted, answers, server)
            .unwrap_or_else(|| closest(wanted, answers, server));
        plans.push(Some(number(&slots, taken)));
        taken += from_server;
    }
    (taken == split.server.len()).then_some(plans)
}

/// An interleaving of `answers` and `server`, each in its own order, that
/// follows `wanted` where it can: at each place the one that matches it,
/// else the answer's next.
fn closest(wanted: &[Value], answers: &[(Event, Value)], server: &[(Event, Value)]) -> Vec<Slot> {
    let (mut a, mut s) = (0, 0);
    let mut slots = Vec::with_capacity(answers.len() + server.len());
    for place in 0..answers.len() + server.len() {
        let next = wanted.get(place);
        let answer_fits = answers.get(a).is_some_and(|e| Some(&e.1) == next);
        let server_fits = server.get(s).is_some_and(|e| Some(&e.1) == next);
        let slot = if a < answers.len() && (answer_fits || !server_fits) {
            Slot::Answer
        } else {
            Slot::Server
        };
        match slot {
            Slot::Answer => a += 1,
            Slot::Server => s += 1,
        }
        slots.push(slot);
    }
    slots
}

/// Each interaction on its own, with the GET-stream messages filed under it.
fn by_interaction(wanted: &[Vec<Value>], split: &Split) -> Vec<Option<Plan>> {
    (0..split.answers.len())
        .map(|index| {
            let wanted = wanted.get(index)?;
            let server = split.server_of(index);
            let slots = interleaving(wanted, &split.answers[index], server)?;
            Some(number(&slots, split.server_start[index]))
        })
        .collect()
}

/// Slots with positions: answers from 0 within the interaction, GET-stream
/// messages from `server_from` in the session.
fn number(slots: &[Slot], server_from: usize) -> Plan {
    let (mut answer, mut server) = (0, server_from);
    slots
        .iter()
        .map(|&slot| {
            let counter = match slot {
                Slot::Answer => &mut answer,
                Slot::Server => &mut server,
            };
            *counter += 1;
            (slot, *counter - 1)
        })
        .collect()
}

/// How `wanted` interleaves `answers` and `server`, each kept in its own
/// order, if it does.
fn interleaving(
    wanted: &[Value],
    answers: &[(Event, Value)],
    server: &[(Event, Value)],
) -> Option<Vec<Slot>> {
    let (a, s) = (answers.len(), server.len());
    if wanted.len() != a + s {
        return None;
    }
    // fits[i][j]: the first i + j wanted are the first i answers and the
    // first j GET-stream messages, interleaved.
    let mut fits = vec![vec![false; s + 1]; a + 1];
    fits[0][0] = true;
    for i in 0..=a {
        for j in 0..=s {
            if i + j == 0 {
                continue;
            }
            let next = &wanted[i + j - 1];
            fits[i][j] = (i > 0 && fits[i - 1][j] && answers[i - 1].1 == *next)
                || (j > 0 && fits[i][j - 1] && server[j - 1].1 == *next);
        }
    }
    if !fits[a][s] {
        return None;
    }
    let mut slots = Vec::with_capacity(a + s);
    let (mut i, mut j) = (a, s);
    while i + j > 0 {
        if i > 0 && fits[i - 1][j] && answers[i - 1].1 == wanted[i + j - 1] {
            slots.push(Slot::Answer);
            i -= 1;
        } else {
            slots.push(Slot::Server);
            j -= 1;
        }
    }
    slots.reverse();
    Some(slots)
}

fn events(interaction: &Interaction) -> impl Iterator<Item = &Event> {
    interaction.during.iter().chain(&interaction.after)
}

/// The server's message an event holds.
fn message(event: &Event) -> &Value {
    match event {
        Event::Notification { notification } => notification,
        Event::ServerRequest { server_request, .. } => server_request,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::cassette::{Builder, Direction, Transport};

    fn log(text: &str) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": text}})
    }

    fn progress(n: u64) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": 1, "progress": n}})
    }

    fn request(id: u64) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "t"}})
    }

    fn response(id: u64) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    }

    /// A session of two calls, each `[server messages]` then its response.
    fn session(first: &[Value], second: &[Value]) -> Cassette {
        let transport = Transport::Stdio {
            command: Vec::new(),
            cwd: None,
        };
        let mut builder = Builder::new(String::new(), transport);
        for (id, messages) in [(1, first), (2, second)] {
            builder.observe(Direction::ClientToServer, request(id));
            for message in messages {
                builder.observe(Direction::ServerToClient, message.clone());
            }
            builder.observe(Direction::ServerToClient, response(id));
        }
        builder.finish()
    }

    fn traffic(cassette: &Cassette) -> Vec<Vec<Value>> {
        cassette
            .interactions
            .iter()
            .map(|i| events(i).map(|e| message(e).clone()).collect())
            .collect()
    }

    #[test]
    fn another_interleaving_of_the_streams_takes_the_recorded_one() {
        let recorded = session(&[progress(1), log("a"), progress(2), log("b")], &[]);
        let mut live = session(&[log("a"), log("b"), progress(1), progress(2)], &[]);
        let reordered = align(&recorded, &mut live, &[log("a"), log("b")], &[]);
        assert_eq!(reordered, 1);
        assert_eq!(traffic(&live), traffic(&recorded));
    }

    #[test]
    fn get_stream_messages_go_back_to_the_interaction_that_had_them() {
        // Live, the logs came late, during the second call.
        let recorded = session(&[log("a"), progress(1), log("b")], &[]);
        let mut live = session(&[progress(1)], &[log("a"), log("b")]);
        align(&recorded, &mut live, &[log("a"), log("b")], &[]);
        assert_eq!(traffic(&live), traffic(&recorded));
    }

    #[test]
    fn order_within_a_stream_is_kept() {
        let recorded = session(&[progress(1), log("a"), progress(2), log("b")], &[]);
        // Progress swapped on the answer's stream: no interleaving fits.
        let mut live = session(&[log("a"), log("b"), progress(2), progress(1)], &[]);
        align(&recorded, &mut live, &[log("a"), log("b")], &[]);
        let placed = &traffic(&live)[0];
        let progress_order: Vec<&Value> = placed
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .collect();
        assert_eq!(progress_order, [&progress(2), &progress(1)]);
        assert_ne!(traffic(&live), traffic(&recorded));
        // Logs swapped on the GET stream: kept swapped.
        let mut live = session(&[log("b"), log("a"), progress(1), progress(2)], &[]);
        align(&recorded, &mut live, &[log("b"), log("a")], &[]);
        let placed = &traffic(&live)[0];
        let first_log = placed.iter().position(|m| *m == log("b")).unwrap();
        let second_log = placed.iter().position(|m| *m == log("a")).unwrap();
        assert!(first_log < second_log, "{placed:?}");
    }

    #[test]
    fn without_a_get_stream_nothing_moves() {
        let recorded = session(&[progress(1), log("a")], &[]);
        let mut live = session(&[log("a"), progress(1)], &[]);
        assert_eq!(align(&recorded, &mut live, &[], &[]), 0);
        assert_eq!(traffic(&live)[0], [log("a"), progress(1)]);
    }

    #[test]
    fn extra_messages_stay_where_they_came() {
        let recorded = session(&[log("a")], &[]);
        let mut live = session(&[progress(1), log("a")], &[log("z")]);
        align(&recorded, &mut live, &[log("a"), log("z")], &[]);
        assert_eq!(traffic(&live)[1], [log("z")], "not moved to the first call");
    }
}
