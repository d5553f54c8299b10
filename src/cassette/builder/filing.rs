//! Which interaction a server message is filed under: the request whose
//! progress token it names, the one in flight, the next one answered (a
//! notification waits to be decided, in bounded memory), or the opening;
//! and the recorded delays of what is filed.

use serde_json::Value;

use super::{Builder, Place, UNDECIDED_LIMIT, Undecided};
use crate::cassette::format::{Event, EventRef, Transport};
use crate::jsonrpc;

impl Builder {
    /// Server traffic belongs to the request whose progress token it names,
    /// else to the most recent request in flight, else it followed the last
    /// client message unprompted. (A notification over stdio with several
    /// requests in flight waits for the next answer instead:
    /// [`candidates_for`](Self::candidates_for).)
    ///
    /// A `subscriptions/listen` request stays in flight as long as its
    /// stream is open, so it owns only its acknowledgement, and what comes
    /// when nothing else is in flight right after it. A change notification
    /// on the stream (a `list_changed` after a tool call that changed a
    /// list) belongs to the request that caused it: the one in flight, or
    /// the last client message, so that replay plays it after that request.
    pub(super) fn place_for(&self, message: &Value) -> Place {
        let by_token = message
            .pointer("/params/progressToken")
            .and_then(|token| self.progress.get(&jsonrpc::id_key(token)));
        if let Some(&index) = by_token {
            return Place::During(index, self.interactions[index].during.len());
        }
        let stream = self.open_listen(message);
        let acknowledges =
            jsonrpc::method(message) == Some("notifications/subscriptions/acknowledged");
        // The POST stream it came on ties it, unless that is a listen
        // stream (its own rule follows).
        if let Some(owner) = self.stream_of
            && self.open.contains(&owner)
            && !self.is_listen(owner)
        {
            return Place::During(owner, self.interactions[owner].during.len());
        }
        let in_flight = self.open.iter().rev().find(|&&i| !self.is_listen(i));
        let owner = match (stream, acknowledges) {
            (Some(stream), true) => Some(stream),
            _ => in_flight.copied(),
        };
        if let Some(index) = owner {
            return Place::During(index, self.interactions[index].during.len());
        }
        match self.last_client {
            // Over HTTP the stream and the call's answer travel on separate
            // connections, so which came first is not known: the change is
            // kept with its cause, before its answer.
            Some(index)
                if stream.is_some()
                    && !matches!(self.transport, Transport::Stdio { .. })
                    && !self.is_listen(index)
                    && self.interactions[index].is_request() =>
            {
                Place::During(index, self.interactions[index].during.len())
            }
            Some(index) if !(self.is_listen(index) && self.open.contains(&index)) => {
                Place::After(index, self.interactions[index].after.len())
            }
            // The last client message opened a listen stream that is still
            // open (what follows is its own), or there was none yet.
            _ => match stream.or(self.open.last().copied()) {
                Some(index) => Place::During(index, self.interactions[index].during.len()),
                None => Place::Opening(self.opening.len()),
            },
        }
    }

    /// The requests an untied server notification may belong to, when the
    /// next answer is to decide which ([`Undecided`]): over stdio, with
    /// several requests in flight (listen streams aside), for one that
    /// names no progress token in flight and is no listen stream's
    /// acknowledgement. `None` when [`place_for`](Self::place_for) decides
    /// now, as it does for server requests: the tool that sends one waits
    /// for the client's answer, so the next answer is more likely another
    /// tool's.
    ///
    /// Over stdio every message shares one pipe, so its order against the
    /// answers is what the client sees. Over HTTP, where they travel on
    /// separate connections, the rule is as it was.
    pub(super) fn candidates_for(&self, message: &Value) -> Option<Vec<usize>> {
        if self.open.len() < 2 || !matches!(self.transport, Transport::Stdio { .. }) {
            return None;
        }
        let tied = message
            .pointer("/params/progressToken")
            .is_some_and(|token| self.progress.contains_key(&jsonrpc::id_key(token)));
        let acknowledges = jsonrpc::method(message)
            == Some("notifications/subscriptions/acknowledged")
            && self.open_listen(message).is_some();
        if tied || acknowledges {
            return None;
        }
        let candidates: Vec<usize> = self
            .open
            .iter()
            .copied()
            .filter(|&i| !self.is_listen(i))
            .take(UNDECIDED_LIMIT + 1)
            .collect();
        (2..=UNDECIDED_LIMIT)
            .contains(&candidates.len())
            .then_some(candidates)
    }

    /// Keeps `notification` until the next answer to one of `candidates`
    /// (or the fallback) says where it goes, making room first.
    pub(super) fn wait_for_answer(&mut self, notification: Event, candidates: Vec<usize>) {
        while self.undecided_slots + candidates.len() > UNDECIDED_LIMIT {
            self.decide_by_fallback(0);
        }
        let candidates: Vec<(usize, usize)> = candidates
            .into_iter()
            .map(|index| (index, self.interactions[index].during.len()))
            .collect();
        for &(index, _) in &candidates {
            *self.pinned.entry(index).or_default() += 1;
        }
        self.undecided_slots += candidates.len();
        self.undecided.push_back(Undecided {
            notification,
            candidates,
            at: self.now,
        });
        self.last_filed = None;
    }

    /// Request `index` is being answered: the notifications waiting that
    /// it was in flight for are its own, in the order they came.
    pub(super) fn decide_answered(&mut self, index: usize) {
        let mut at = 0;
        while at < self.undecided.len() {
            if self.undecided[at]
                .candidates
                .iter()
                .any(|&(i, _)| i == index)
            {
                self.decide(at, index);
            } else {
                at += 1;
            }
        }
    }

    /// Files by the fallback rule the notifications waiting for requests
    /// none of which is in flight any more: none will be answered.
    pub(super) fn decide_orphans(&mut self) {
        let mut at = 0;
        while at < self.undecided.len() {
            let orphan = self.undecided[at]
                .candidates
                .iter()
                .all(|(i, _)| !self.open.contains(i));
            if orphan {
                self.decide_by_fallback(at);
            } else {
                at += 1;
            }
        }
    }

    /// Files the `at`th notification waiting under the most recent request
    /// that was in flight when it came: where it would have gone had it not
    /// waited.
    pub(super) fn decide_by_fallback(&mut self, at: usize) {
        if let Some(&(owner, _)) = self
            .undecided
            .get(at)
            .and_then(|undecided| undecided.candidates.last())
        {
            self.decide(at, owner);
        }
    }

    /// Files the `at`th notification waiting in `during` of `owner` (one of
    /// its candidates), where it came among what was filed there, timed
    /// from `owner`'s request. What was filed there after it moves one on.
    fn decide(&mut self, at: usize, owner: usize) {
        let Some(undecided) = self.undecided.remove(at) else {
            return;
        };
        self.undecided_slots -= undecided.candidates.len();
        let position = undecided
            .candidates
            .iter()
            .find(|&&(index, _)| index == owner)
            .map(|&(_, position)| position);
        let interaction = &mut self.interactions[owner];
        let position = position.unwrap_or(interaction.during.len());
        interaction.during.insert(position, undecided.notification);
        let moved = |i: &mut usize| {
            if *i >= position {
                *i += 1;
            }
        };
        if let Some(http) = &mut interaction.http {
            for streamed in &mut http.get_stream {
                if let EventRef::During(i) = &mut streamed.event {
                    moved(i);
                }
            }
        }
        if let (Some(now), Some(asked)) = (undecided.at, self.client_at.get(&owner))
            && position <= interaction.delays_ms.len()
        {
            let delay = now.saturating_sub(*asked).as_millis();
            let delay = u64::try_from(delay).unwrap_or(u64::MAX);
            interaction.delays_ms.insert(position, delay);
        }
        for place in self.server_requests.values_mut() {
            if let Place::During(n, i) = place
                && *n == owner
            {
                moved(i);
            }
        }
        if let Some((n, EventRef::During(i))) = &mut self.last_filed
            && *n == owner
        {
            moved(i);
        }
        // Those that came later go after it; those that came earlier and
        // are still waiting, before.
        for (later, waiting) in self.undecided.iter_mut().enumerate() {
            for (index, i) in &mut waiting.candidates {
                if *index == owner && (*i > position || (*i == position && later >= at)) {
                    *i += 1;
                }
            }
        }
        for (index, _) in undecided.candidates {
            if let Some(pins) = self.pinned.get_mut(&index) {
                *pins -= 1;
                if *pins == 0 {
                    self.pinned.remove(&index);
                    self.try_settle(index);
                }
            }
        }
    }

    /// Whether interaction `index` is a `subscriptions/listen` request.
    fn is_listen(&self, index: usize) -> bool {
        self.interactions[index].method() == "subscriptions/listen"
    }

    /// The open listen stream a server message names in its `_meta`.
    fn open_listen(&self, message: &Value) -> Option<usize> {
        let named = message
            .pointer("/params/_meta")?
            .get("io.modelcontextprotocol/subscriptionId")?;
        let key = jsonrpc::id_key(named);
        self.open.iter().rev().copied().find(|&i| {
            self.is_listen(i)
                && self.interactions[i]
                    .request()
                    .and_then(jsonrpc::id)
                    .is_some_and(|id| jsonrpc::id_key(id) == key)
        })
    }

    pub(super) fn file(&mut self, place: Place, event: Event) -> Place {
        self.last_filed = match place {
            Place::Opening(_) => None,
            Place::During(n, i) => Some((n, EventRef::During(i))),
            Place::After(n, i) => Some((n, EventRef::After(i))),
        };
        match place {
            Place::Opening(_) => self.opening.push(event),
            Place::During(n, _) => {
                self.interactions[n].during.push(event);
                self.note_delay(n);
            }
            Place::After(n, _) => self.interactions[n].after.push(event),
        }
        place
    }

    /// Notes how long after its client message interaction `index` got the
    /// message just filed in `during` or as its response.
    pub(super) fn note_delay(&mut self, index: usize) {
        if let (Some(now), Some(asked)) = (self.now, self.client_at.get(&index)) {
            let delay = now.saturating_sub(*asked).as_millis();
            let delay = u64::try_from(delay).unwrap_or(u64::MAX);
            self.interactions[index].delays_ms.push(delay);
        }
    }
}
