//! The matcher: which recorded interaction answers each live message, under
//! a cassette's rules and strategy.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};
use smallvec::SmallVec;

use super::{Key, KeyMap, MessageKind, OnExhausted, Rules, Strategy};
use crate::cassette::{Cassette, ClientMessage, Interaction};
use crate::json::{LiveRequest, RawMessage};
use crate::protocol::{self, Era};

/// Methods answered outside the matcher's order: handshakes are answered
/// from their first recording every time, `ping` always.
pub(crate) const OUT_OF_ORDER_METHODS: [&str; 3] = ["initialize", "server/discover", "ping"];

/// Polls of a task's state (`tasks/get` in 2025-11-25's experimental tasks
/// and the 2026-07-28 tasks extension, and 2025-11-25's `tasks/list`): a
/// client polls at its own pace, so a replay may see more or fewer of them
/// than were recorded. They are answered by content outside the order,
/// from the recorded sequence in order, and then the last recorded answer
/// (the final status) again, whatever `on_exhausted` says; and the polls a
/// client did not need count as used once any of the same poll was.
pub(crate) const POLL_METHODS: [&str; 2] = ["tasks/get", "tasks/list"];

/// Whether the interaction or request method is a poll ([`POLL_METHODS`]).
fn is_poll(method: &str) -> bool {
    POLL_METHODS.contains(&method)
}

/// The capabilities a modern request declares in `_meta` (the names of the
/// top-level ones and of its extensions), hashed; `None` when it declares
/// none.
fn declaration(request: &Value) -> Option<u64> {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let declared = request
        .get("params")?
        .get("_meta")?
        .get(protocol::META_CLIENT_CAPABILITIES)?
        .as_object()?;
    let mut names: Vec<String> = Vec::new();
    for (name, value) in declared {
        match (name.as_str(), value.as_object()) {
            ("extensions", Some(extensions)) => {
                names.extend(extensions.keys().map(|e| format!("extensions/{e}")));
            }
            _ => names.push(name.clone()),
        }
    }
    names.sort();
    let mut hasher = DefaultHasher::new();
    names.hash(&mut hasher);
    Some(hasher.finish())
}

/// The task a request names (`params.taskId`).
fn task_id(request: &Value) -> Option<&str> {
    request.get("params")?.get("taskId")?.as_str()
}

/// What matching reads of a live request, from its tree or its text.
struct Live<'a> {
    method: &'a str,
    /// Its key, situation included.
    key: Key,
    /// The task it names (`params.taskId`).
    task: Option<&'a str>,
    /// The capabilities it declares ([`declaration`]).
    declared: Option<u64>,
}

/// How a request is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// By this recorded interaction.
    Recorded(usize),
    /// By this recorded interaction again (`on_exhausted: repeat-last`).
    Repeated(usize),
    /// By this hand-written case.
    Case(usize),
}

/// Why a request cannot be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Nothing recorded matches it.
    Missing,
    /// It was recorded, and all its recorded answers have been given.
    Exhausted {
        /// How many times it was answered.
        answered: usize,
    },
    /// The recording expected another request next (`sequential`, `strict`).
    OutOfOrder {
        /// The interaction that was due.
        expected: usize,
    },
}

/// Hands out recorded interactions. Lookups by content go through a hash
/// index of the interactions' keys: one SHA-256 and one probe per request.
///
/// The index is built a method at a time, the first time a live message of
/// that method asks: a replay answers `initialize` before it
/// has read a single recorded `tools/call`, and a method no client asks
/// for is never read. Forks ([`Matcher::fresh`]) share it.
#[derive(Debug)]
pub struct Matcher {
    index: Arc<Index>,
    /// How many answers each key has handed out, kept at the key's first
    /// recorded position: a plain vector, read and written in place, where
    /// a map by key cost a probe (and, at first, an insert) per request,
    /// the most of a lookup among 100 000 keys (docs/benchmarks.md).
    taken: Vec<u32>,
    /// How many of each key's recordings that declared the same
    /// capabilities have been handed out (see [`Keyed::by_declaration`]).
    taken_declared: KeyMap<(Key, u64), usize>,
    cursor: usize,
    /// How often each interaction was used.
    used: Vec<u32>,
    /// How often each hand-written case was used.
    case_uses: Vec<u32>,
    /// Per task id, the latest recorded position of a request that changed
    /// the task (`tasks/cancel`, `tasks/update`) and was answered: polls
    /// recorded before it describe a state the task has left.
    task_changes: HashMap<String, usize>,
}

/// What a matcher knows of one cassette under its rules, which no answer
/// changes: the interactions grouped by kind and method, each group keyed
/// when first asked for.
#[derive(Debug)]
struct Index {
    rules: Rules,
    /// Whether the cassette is of the modern era, where the protocol version
    /// a request declares in `_meta` decides the answer.
    modern: bool,
    /// Requests in recorded order (for `sequential` and `strict`).
    order: Vec<usize>,
    /// Group numbers by method, for requests and for notifications.
    requests: HashMap<String, usize>,
    notifications: HashMap<String, usize>,
    groups: Vec<Group>,
    /// Each interaction's group, and its place in the group.
    slots: Vec<(u32, u32)>,
}

/// The recorded messages of one kind and method.
#[derive(Debug)]
struct Group {
    kind: MessageKind,
    /// Their positions, in recorded order.
    positions: Vec<usize>,
    keyed: OnceLock<Keyed>,
}

/// A group's messages read: their keys, and their positions by key.
#[derive(Debug)]
struct Keyed {
    /// Each message's key under the rules, in the group's order.
    keys: Vec<Key>,
    /// Modern era: the capabilities each message declared in `_meta`
    /// (their names, hashed), in the group's order.
    declared: Vec<Option<u64>>,
    /// Positions by key, in recorded order; a key recorded once keeps its
    /// position in the table itself, not behind a pointer that misses the
    /// cache on every lookup among many keys.
    by_key: KeyMap<Key, SmallVec<[usize; 1]>>,
    /// Request positions by key and declaration. A server's answer may
    /// depend on what a client declared (a task only for a client that
    /// declared the tasks extension; -32021 for one that did not), so among
    /// recordings of the same request the one that declared what the live
    /// request declares answers first; matching itself leaves `_meta` out,
    /// so a client that declares otherwise is still answered.
    by_declaration: KeyMap<(Key, u64), Vec<usize>>,
}

/// The count, in a matcher's `taken`, of the recordings `same` of one key
/// handed out so far: kept at the key's first recorded position.
fn count<'a>(taken: &'a mut [u32], same: &[usize]) -> &'a mut u32 {
    &mut taken[same[0]]
}

/// Interactions per thread below which [`keys_of`] stays on one thread.
const KEYS_PER_THREAD: usize = 8192;

/// The match key and the capabilities declared of each interaction at
/// `positions`: the one pass that reads a group's requests, on `threads`
/// threads. Most are read from their text; the rest are parsed once,
/// without keeping their trees.
fn keys_of(
    interactions: &[Interaction],
    positions: &[usize],
    rules: &Rules,
    modern: bool,
    threads: usize,
) -> Vec<(Key, Option<u64>)> {
    let read = |&position: &usize| {
        let interaction = &interactions[position];
        let (kind, message) = match &interaction.client {
            ClientMessage::Request(m) => (MessageKind::Request, m),
            ClientMessage::Notification(m) => (MessageKind::Notification, m),
        };
        let situation = interaction.http.as_ref().and_then(|h| h.situation.tag());
        let reading = Reading {
            rules,
            modern,
            kind,
            situation: situation.as_deref(),
        };
        reading
            .text(message)
            .unwrap_or_else(|| message.with(|tree| reading.tree(tree)))
    };
    crate::parallel::map_in_order(positions, threads, read)
}

/// What [`keys_of`] reads one recorded message with.
struct Reading<'a> {
    rules: &'a Rules,
    modern: bool,
    kind: MessageKind,
    /// The HTTP situation it was recorded in, when that tells answers apart.
    situation: Option<&'a str>,
}

impl Reading<'_> {
    /// Key and declaration from the message's text, when it is plain
    /// enough ([`Rules::key_from_text`]): all the modern era reads besides
    /// the key is `params._meta`, parsed alone.
    fn text(&self, message: &RawMessage) -> Option<(Key, Option<u64>)> {
        let key = self.rules.key_from_text(self.kind, message)?;
        let meta = match self.modern {
            true => json!({"params": {"_meta": message.params_meta()}}),
            false => Value::Null,
        };
        Some(self.finish(key, &meta))
    }

    /// Key and declaration from the message's tree.
    fn tree(&self, message: &Value) -> (Key, Option<u64>) {
        self.finish(self.rules.key(self.kind, message), message)
    }

    /// The key under the protocol version and situation, and the
    /// declaration, both read from `meta` (the message, or its `_meta`).
    fn finish(&self, key: Key, meta: &Value) -> (Key, Option<u64>) {
        let declares = (self.modern && self.kind == MessageKind::Request)
            .then(|| declaration(meta))
            .flatten();
        (
            situation_key(key, self.modern, meta, self.situation),
            declares,
        )
    }
}

impl Index {
    /// Groups `cassette`'s interactions by kind and method: one pass that
    /// reads each message's method, which its load already found.
    fn new(cassette: &Cassette, rules: Rules) -> Self {
        let count = cassette.interactions.len();
        let mut index = Index {
            rules,
            modern: cassette.protocol.era == Era::Modern,
            order: Vec::with_capacity(count),
            requests: HashMap::new(),
            notifications: HashMap::new(),
            groups: Vec::new(),
            slots: Vec::with_capacity(count),
        };
        for (position, interaction) in cassette.interactions.iter().enumerate() {
            let method = interaction.method();
            let (kind, numbers) = match &interaction.client {
                ClientMessage::Request(_) => (MessageKind::Request, &mut index.requests),
                ClientMessage::Notification(_) => {
                    (MessageKind::Notification, &mut index.notifications)
                }
            };
            let number = match numbers.get(method) {
                Some(&number) => number,
                None => {
                    numbers.insert(method.to_owned(), index.groups.len());
                    index.groups.push(Group {
                        kind,
                        positions: Vec::new(),
                        keyed: OnceLock::new(),
                    });
                    index.groups.len() - 1
                }
            };
            let group = &mut index.groups[number];
            index
                .slots
                .push((number as u32, group.positions.len() as u32));
            group.positions.push(position);
            if kind == MessageKind::Request
                && !OUT_OF_ORDER_METHODS.contains(&method)
                && !is_poll(method)
            {
                index.order.push(position);
            }
        }
        index
    }

    /// The recorded messages of `kind` and `method`, keyed, if there are any.
    fn group(&self, cassette: &Cassette, kind: MessageKind, method: &str) -> Option<&Keyed> {
        let numbers = match kind {
            MessageKind::Request => &self.requests,
            MessageKind::Notification => &self.notifications,
        };
        let number = *numbers.get(method)?;
        Some(self.keyed(cassette, number))
    }

    /// Group `number`, keyed on first use.
    fn keyed(&self, cassette: &Cassette, number: usize) -> &Keyed {
        let group = &self.groups[number];
        group.keyed.get_or_init(|| {
            let positions = &group.positions;
            let threads = crate::parallel::threads_for(positions.len(), KEYS_PER_THREAD);
            let read = keys_of(
                &cassette.interactions,
                positions,
                &self.rules,
                self.modern,
                threads,
            );
            let mut keyed = Keyed {
                keys: Vec::with_capacity(positions.len()),
                declared: Vec::with_capacity(positions.len()),
                by_key: KeyMap::with_capacity_and_hasher(positions.len(), Default::default()),
                by_declaration: KeyMap::default(),
            };
            for (&position, (key, declares)) in positions.iter().zip(read) {
                keyed.by_key.entry(key).or_default().push(position);
                if let (MessageKind::Request, Some(signature)) = (group.kind, declares) {
                    let same = keyed.by_declaration.entry((key, signature));
                    same.or_default().push(position);
                }
                keyed.keys.push(key);
                keyed.declared.push(declares);
            }
            keyed
        })
    }

    /// Interaction `position`'s key.
    fn key(&self, cassette: &Cassette, position: usize) -> Key {
        self.same_key(cassette, position).0
    }

    /// Interaction `position`'s key, and every position recorded with it.
    fn same_key(&self, cassette: &Cassette, position: usize) -> (Key, Option<&[usize]>) {
        let (number, at) = self.slots[position];
        let keyed = self.keyed(cassette, number as usize);
        let key = keyed.keys[at as usize];
        (key, keyed.by_key.get(&key).map(|same| same.as_slice()))
    }
}

impl Matcher {
    /// A matcher for `cassette` under `rules`. It reads no recorded
    /// message's params yet: each method's are read the first time a live
    /// message of that method asks.
    pub fn new(cassette: &Cassette, rules: Rules) -> Self {
        Self::starting(Arc::new(Index::new(cassette, rules)))
    }

    /// A matcher for the same cassette under the same rules with nothing
    /// handed out yet, sharing this one's index (and what it has read).
    /// Only for the cassette this one was made for.
    pub fn fresh(&self) -> Self {
        Self::starting(Arc::clone(&self.index))
    }

    /// A matcher over `index` with nothing handed out yet.
    fn starting(index: Arc<Index>) -> Self {
        Matcher {
            taken: vec![0; index.slots.len()],
            taken_declared: KeyMap::default(),
            cursor: 0,
            used: vec![0; index.slots.len()],
            case_uses: vec![0; index.rules.cases.len()],
            task_changes: HashMap::new(),
            index,
        }
    }

    /// The rules in force.
    pub fn rules(&self) -> &Rules {
        &self.index.rules
    }

    /// The interaction due next under `sequential` or `strict`, if any.
    pub fn due(&self) -> Option<usize> {
        self.index.order.get(self.cursor).copied()
    }

    /// Finds the answer to a live request and marks it used. `situation` is
    /// the tag of an out-of-the-ordinary HTTP situation
    /// ([`crate::cassette::HttpSituation::tag`]), if any.
    pub fn request(
        &mut self,
        cassette: &Cassette,
        request: &Value,
        situation: Option<&str>,
    ) -> Result<Answer, Refusal> {
        let index = Arc::clone(&self.index);
        let base = index.rules.key(MessageKind::Request, request);
        let method = crate::jsonrpc::method(request).unwrap_or_default();
        let live = Live {
            method,
            key: situation_key(base, index.modern, request, situation),
            task: task_id(request),
            // Only modern requests declare capabilities in `_meta`.
            declared: index.modern.then(|| declaration(request)).flatten(),
        };
        let refusal = match self.recorded(cassette, &live) {
            Ok(answer) => return Ok(answer),
            Err(refusal) => refusal,
        };
        match index
            .rules
            .case_for(method, crate::jsonrpc::params(request))
        {
            Some((case, _)) => {
                self.case_uses[case] += 1;
                Ok(Answer::Case(case))
            }
            None => Err(refusal),
        }
    }

    /// [`Matcher::request`] read from the request's text, for the requests
    /// whose text says all that matching needs: a legacy cassette's (only
    /// modern requests declare anything in `_meta`), in the ordinary
    /// situation, naming no task, under rules that do not reshape its
    /// params. Recorded answers only: a refusal is for the caller to take
    /// to [`Matcher::request`] with the tree, which may find a
    /// hand-written case (a refused lookup changes nothing). `None` when
    /// the text cannot say.
    pub(crate) fn request_text(
        &mut self,
        cassette: &Cassette,
        request: &LiveRequest,
    ) -> Option<Result<Answer, Refusal>> {
        if self.index.modern || request.message.has_escapes() {
            return None;
        }
        let method = request.message.method()?;
        let params = request.params();
        let rules = &self.index.rules;
        let key = rules.key_from_params_text(MessageKind::Request, method, params)?;
        let names_task =
            params.is_some_and(|p| memchr::memmem::find(p.as_bytes(), b"\"taskId\"").is_some());
        if names_task {
            return None;
        }
        let live = Live {
            method,
            key,
            task: None,
            declared: None,
        };
        Some(self.recorded(cassette, &live))
    }

    /// The recorded interaction that answers `live`, marked used.
    fn recorded(&mut self, cassette: &Cassette, live: &Live<'_>) -> Result<Answer, Refusal> {
        let index = Arc::clone(&self.index);
        let (method, key) = (live.method, live.key);
        let recorded = index.group(cassette, MessageKind::Request, method);
        // Handshakes and `ping` are answered outside the order: by content,
        // whatever the strategy, so their recordings count as used.
        let poll = is_poll(method);
        let in_order = index.rules.strategy != Strategy::Keyed
            && !OUT_OF_ORDER_METHODS.contains(&method)
            && !poll;
        if poll && let Some(recorded) = recorded {
            self.skip_stale_polls(recorded, live);
        }
        let refusal = if in_order {
            self.in_order(cassette, method, key)
        } else {
            self.by_content(recorded, key, live.declared)
        };
        let refusal = match refusal {
            Ok(position) => {
                if !poll && let Some(task) = live.task {
                    let change = self.task_changes.entry(task.to_owned()).or_default();
                    *change = (*change).max(position);
                }
                return Ok(self.use_recorded(position, Answer::Recorded));
            }
            Err(refusal) => refusal,
        };
        let repeat = poll || index.rules.on_exhausted == OnExhausted::RepeatLast;
        if matches!(refusal, Refusal::Exhausted { .. })
            && repeat
            && let Some(last) = self.last_taken(cassette, recorded, method, key, in_order)
        {
            return Ok(self.use_recorded(last, Answer::Repeated));
        }
        Err(refusal)
    }

    fn use_recorded(&mut self, position: usize, answer: fn(usize) -> Answer) -> Answer {
        self.used[position] += 1;
        answer(position)
    }

    /// Moves past the recorded polls of a task that came before the latest
    /// change to it a client made: after a `tasks/cancel`, a slower client
    /// gets the states recorded after the cancel, not those before it.
    fn skip_stale_polls(&mut self, recorded: &Keyed, live: &Live<'_>) {
        let Some(&change) = live.task.and_then(|task| self.task_changes.get(task)) else {
            return;
        };
        let Some(positions) = recorded.by_key.get(&live.key) else {
            return;
        };
        let taken = count(&mut self.taken, positions);
        while positions.get(*taken as usize).is_some_and(|&p| p < change) {
            *taken += 1;
        }
    }

    /// `keyed`: the next unused interaction with this key among the
    /// `recorded` requests of its method, preferring one whose request
    /// declared the capabilities `declared` (see [`Keyed::by_declaration`]).
    fn by_content(
        &mut self,
        recorded: Option<&Keyed>,
        key: Key,
        declared: Option<u64>,
    ) -> Result<usize, Refusal> {
        let recorded = recorded.ok_or(Refusal::Missing)?;
        let positions = recorded.by_key.get(&key).ok_or(Refusal::Missing)?;
        let used = &self.used;
        let taken = count(&mut self.taken, positions);
        while positions.get(*taken as usize).is_some_and(|&p| used[p] > 0) {
            *taken += 1;
        }
        let Some(&first) = positions.get(*taken as usize) else {
            return Err(Refusal::Exhausted {
                answered: *taken as usize,
            });
        };
        // What the first recording declared is read only when the live
        // request declared anything: two more loads that miss the cache
        // among many keys.
        let twin = declared
            .filter(|&signature| {
                recorded.declared[self.index.slots[first].1 as usize] != Some(signature)
            })
            .and_then(|signature| {
                let same = recorded.by_declaration.get(&(key, signature))?;
                let next = self.taken_declared.entry((key, signature)).or_default();
                while same.get(*next).is_some_and(|&p| used[p] > 0) {
                    *next += 1;
                }
                same.get(*next).copied()
            });
        match twin {
            Some(position) => Ok(position),
            None => {
                *taken += 1;
                Ok(first)
            }
        }
    }

    /// `sequential` and `strict`: the interaction due next, if it fits.
    fn in_order(&mut self, cassette: &Cassette, method: &str, key: Key) -> Result<usize, Refusal> {
        let Some(expected) = self.due() else {
            let answered = self.same_request(cassette, method, key).count();
            return Err(if answered == 0 {
                Refusal::Missing
            } else {
                Refusal::Exhausted { answered }
            });
        };
        if !self.fits(cassette, expected, method, key) {
            return Err(Refusal::OutOfOrder { expected });
        }
        self.cursor += 1;
        Ok(expected)
    }

    /// Whether recorded interaction `position` answers a request of
    /// `method` with `key` under the strategy (method only for
    /// `sequential`, the key otherwise; a key names its method, so another
    /// method's are never read).
    fn fits(&self, cassette: &Cassette, position: usize, method: &str, key: Key) -> bool {
        let same_method = cassette.interactions[position].method() == method;
        match self.index.rules.strategy {
            Strategy::Sequential => same_method,
            Strategy::Keyed | Strategy::Strict => {
                same_method && self.index.key(cassette, position) == key
            }
        }
    }

    /// Recorded requests that answer a request of `method` with `key` and
    /// were already used.
    fn same_request<'a>(
        &'a self,
        cassette: &'a Cassette,
        method: &'a str,
        key: Key,
    ) -> impl Iterator<Item = usize> + 'a {
        self.index.order[..self.cursor]
            .iter()
            .copied()
            .filter(move |&p| self.fits(cassette, p, method, key))
    }

    fn last_taken(
        &self,
        cassette: &Cassette,
        recorded: Option<&Keyed>,
        method: &str,
        key: Key,
        in_order: bool,
    ) -> Option<usize> {
        if in_order {
            self.same_request(cassette, method, key).last()
        } else {
            recorded?.by_key.get(&key)?.last().copied()
        }
    }

    /// The recorded interaction for a live client notification, if any
    /// (its `after` events are replayed).
    pub fn notification(&mut self, cassette: &Cassette, notification: &Value) -> Option<usize> {
        let index = Arc::clone(&self.index);
        let base = index.rules.key(MessageKind::Notification, notification);
        let key = situation_key(base, index.modern, notification, None);
        let method = crate::jsonrpc::method(notification).unwrap_or_default();
        let recorded = index.group(cassette, MessageKind::Notification, method)?;
        let positions = recorded.by_key.get(&key)?;
        let taken = count(&mut self.taken, positions);
        let position = *positions.get(*taken as usize)?;
        *taken += 1;
        self.used[position] += 1;
        Some(position)
    }

    /// Marks an interaction used that was answered outside the matcher.
    pub fn mark_used(&mut self, position: usize) {
        self.used[position] += 1;
    }

    /// Hands interaction `position` back, just taken, as if it had not
    /// been: its answer was only a first round (an `input_required` a
    /// client retries), which the retry completes with [`Matcher::retake`].
    pub(crate) fn give_back(&mut self, cassette: &Cassette, position: usize) {
        let index = Arc::clone(&self.index);
        let (_, same) = index.same_key(cassette, position);
        if let Some(same) = same {
            let taken = count(&mut self.taken, same);
            if *taken > 0 && same.get(*taken as usize - 1) == Some(&position) {
                *taken -= 1;
            }
        }
        if self.cursor > 0 && self.index.order[self.cursor - 1] == position {
            self.cursor -= 1;
        }
        self.used[position] = self.used[position].saturating_sub(1);
    }

    /// Takes interaction `position` as the answer a retry completed (see
    /// [`Matcher::give_back`]), when it is still the one due.
    pub(crate) fn retake(&mut self, cassette: &Cassette, position: usize) {
        let index = Arc::clone(&self.index);
        let (_, same) = index.same_key(cassette, position);
        if let Some(same) = same {
            let taken = count(&mut self.taken, same);
            if same.get(*taken as usize) == Some(&position) {
                *taken += 1;
            }
        }
        if self.index.order.get(self.cursor) == Some(&position) {
            self.cursor += 1;
        }
        self.used[position] += 1;
    }

    /// Interactions never used, in recorded order. Handshakes and `ping`
    /// count as used once any interaction of their method was.
    pub fn unused(&self, cassette: &Cassette) -> Vec<usize> {
        let answered_outside: Vec<&str> = OUT_OF_ORDER_METHODS
            .into_iter()
            .filter(|m| {
                cassette
                    .interactions
                    .iter()
                    .zip(&self.used)
                    .any(|(i, &n)| n > 0 && i.method() == *m)
            })
            .collect();
        let polled = |p: usize| {
            is_poll(cassette.interactions[p].method())
                && (self.index.same_key(cassette, p).1)
                    .is_some_and(|same| same.iter().any(|&q| self.used[q] > 0))
        };
        (0..self.used.len())
            .filter(|&p| {
                self.used[p] == 0
                    && !answered_outside.contains(&cassette.interactions[p].method())
                    && !polled(p)
            })
            .collect()
    }

    /// Hand-written cases never used.
    pub fn unused_cases(&self) -> Vec<usize> {
        (0..self.case_uses.len())
            .filter(|&c| self.case_uses[c] == 0)
            .collect()
    }
}

/// Refines a message's key with what else decides its answer: in the modern
/// era the protocol version it declares (a server answers an unsupported
/// version with an error), and over HTTP an out-of-the-ordinary situation.
fn situation_key(key: Key, modern: bool, message: &Value, situation: Option<&str>) -> Key {
    let version = if modern {
        protocol::declared_version(message)
    } else {
        None
    };
    if version.is_none() && situation.is_none() {
        return key;
    }
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(key.0);
    hasher.update(b"\0version:");
    hasher.update(version.unwrap_or("-").as_bytes());
    hasher.update(b"\0situation:");
    hasher.update(situation.unwrap_or("-").as_bytes());
    Key(hasher.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn modern_keys_and_declarations_read_from_text_are_those_read_from_the_tree() {
        let messages = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": "hi"},
                    "_meta": {protocol::META_PROTOCOL_VERSION: "2026-07-28",
                        protocol::META_CLIENT_CAPABILITIES: {"sampling": {}, "extensions": {"io.tasks": {}}}}}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {}}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
        ];
        let rules = Rules::default();
        for message in messages {
            let raw = RawMessage::from(message.clone());
            for (modern, kind, situation) in [
                (true, MessageKind::Request, None),
                (true, MessageKind::Request, Some("get-stream")),
                (false, MessageKind::Request, None),
                (true, MessageKind::Notification, None),
            ] {
                let reading = Reading {
                    rules: &rules,
                    modern,
                    kind,
                    situation,
                };
                assert_eq!(
                    reading.text(&raw),
                    Some(reading.tree(&message)),
                    "{message}"
                );
            }
        }
    }

    #[test]
    fn keys_read_on_threads_are_the_keys_read_on_one() {
        let interactions: Vec<Interaction> = (0..50)
            .map(|n| {
                let request = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"message": format!("m{}", n % 7)},
                        "_meta": {protocol::META_CLIENT_CAPABILITIES: {"sampling": {}}}}});
                serde_json::from_value(json!({"request": request})).unwrap()
            })
            .collect();
        let rules = Rules::default();
        let positions: Vec<usize> = (0..interactions.len()).collect();
        let one = keys_of(&interactions, &positions, &rules, true, 1);
        assert_eq!(one.len(), 50);
        assert_eq!(one[0], one[7], "the same request, the same key");
        assert_ne!(one[0].0, one[1].0);
        assert!(one.iter().all(|(_, declared)| declared.is_some()));
        for threads in [2, 3, 8, 64] {
            assert_eq!(
                keys_of(&interactions, &positions, &rules, true, threads),
                one,
                "{threads} threads"
            );
        }
    }

    /// A legacy cassette: the handshake, two echo calls, a `tools/list`.
    fn cassette() -> Cassette {
        let request = |id: u64, method: &str, params: Value| {
            json!({"request": {"jsonrpc": "2.0", "id": id, "method": method, "params": params},
                "response": {"jsonrpc": "2.0", "id": id, "result": {}}})
        };
        serde_json::from_value(json!({
            "format_version": crate::cassette::FORMAT_VERSION,
            "recorded_at": "2026-01-01T00:00:00Z",
            "transport": {"kind": "stdio", "command": ["server"]},
            "protocol": {"era": "legacy", "version": "2025-11-25"},
            "interactions": [
                request(0, "initialize", json!({"protocolVersion": "2025-11-25"})),
                {"notification": {"jsonrpc": "2.0", "method": "notifications/initialized"}},
                request(1, "tools/call", json!({"name": "echo", "arguments": {"message": "a"}})),
                request(2, "tools/call", json!({"name": "echo", "arguments": {"message": "b"}})),
                request(3, "tools/list", json!({})),
            ],
        }))
        .unwrap()
    }

    /// Which groups of `matcher`'s index have been keyed, by first method.
    fn keyed_methods(matcher: &Matcher, cassette: &Cassette) -> Vec<String> {
        let index = &matcher.index;
        let mut methods: Vec<String> = (index.groups.iter())
            .filter(|group| group.keyed.get().is_some())
            .map(|group| {
                cassette.interactions[group.positions[0]]
                    .method()
                    .to_owned()
            })
            .collect();
        methods.sort();
        methods
    }

    fn call(message: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": message}}})
    }

    #[test]
    fn a_method_is_read_only_when_a_live_message_of_it_asks() {
        let cassette = cassette();
        let mut matcher = Matcher::new(&cassette, Rules::default());
        assert_eq!(keyed_methods(&matcher, &cassette), Vec::<String>::new());
        assert_eq!(
            matcher.request(&cassette, &call("b"), None),
            Ok(Answer::Recorded(3))
        );
        assert_eq!(keyed_methods(&matcher, &cassette), ["tools/call"]);
        let unknown = json!({"jsonrpc": "2.0", "id": 10, "method": "prompts/list"});
        assert_eq!(
            matcher.request(&cassette, &unknown, None),
            Err(Refusal::Missing)
        );
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(matcher.notification(&cassette, &initialized), Some(1));
        assert_eq!(
            keyed_methods(&matcher, &cassette),
            ["notifications/initialized", "tools/call"]
        );
        // `tools/list` was never asked: reported unused, without being read.
        assert_eq!(matcher.unused(&cassette), [0, 2, 4]);
        assert_eq!(
            keyed_methods(&matcher, &cassette),
            ["notifications/initialized", "tools/call"]
        );
    }

    #[test]
    fn a_fresh_matcher_shares_the_index_and_starts_from_the_top() {
        let cassette = cassette();
        let rules = Rules {
            strategy: Strategy::Strict,
            ..Rules::default()
        };
        let mut first = Matcher::new(&cassette, rules);
        assert_eq!(
            first.request(&cassette, &call("a"), None),
            Ok(Answer::Recorded(2))
        );
        assert_eq!(
            first.request(&cassette, &call("a"), None),
            Err(Refusal::OutOfOrder { expected: 3 })
        );
        let mut second = first.fresh();
        assert!(Arc::ptr_eq(&first.index, &second.index));
        assert_eq!(keyed_methods(&second, &cassette), ["tools/call"]);
        assert_eq!(second.due(), Some(2));
        assert_eq!(
            second.request(&cassette, &call("a"), None),
            Ok(Answer::Recorded(2))
        );
        assert_eq!(
            second.request(&cassette, &call("b"), None),
            Ok(Answer::Recorded(3))
        );
        assert_eq!(first.due(), Some(3), "the first matcher's place is its own");
    }
}
