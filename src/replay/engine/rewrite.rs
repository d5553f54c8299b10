//! How a recorded server message is addressed to the live request: its
//! place in the interaction (for GET-stream framing), the progress token
//! and log floor of the live request, and the live id written in without
//! copying the message.

use serde::Serialize;
use serde_json::Value;

use crate::cassette::{EventRef, Interaction, SseFrame, StreamedEvent};
use crate::jsonrpc;
use crate::replay::cross_era::{self, Translation};

/// Where a run of events sits in its interaction, so that each one's
/// place (for its GET-stream framing) is known.
#[derive(Debug, Clone, Copy)]
pub(super) enum Origin {
    /// `during`, from this index on.
    During(usize),
    /// `after`, from this index on.
    After(usize),
    /// Before any client message.
    Opening,
}

impl Origin {
    pub(super) fn at(self, index: usize) -> Option<EventRef> {
        match self {
            Origin::During(start) => Some(EventRef::During(start + index)),
            Origin::After(start) => Some(EventRef::After(start + index)),
            Origin::Opening => None,
        }
    }
}

/// The recorded and live progress tokens of one request, and which of
/// its recorded log messages the client gets.
pub(super) struct Tokens<'a> {
    recorded: Option<&'a Value>,
    live: Option<&'a Value>,
    logs: cross_era::LogFloor,
    /// How the client's answers are translated, which decides where
    /// change notifications go.
    pub(super) translation: Translation,
    /// The interaction's messages that travelled on the GET stream.
    streamed: &'a [StreamedEvent],
}

impl<'a> Tokens<'a> {
    /// For server messages that belong to no request.
    pub(super) const NONE: Tokens<'static> = Tokens {
        recorded: None,
        live: None,
        logs: cross_era::LogFloor::All,
        translation: Translation::None,
        streamed: &[],
    };

    pub(super) fn new(
        interaction: &'a Interaction,
        live: &'a Value,
        translation: Translation,
    ) -> Self {
        Tokens {
            // Only server messages carry a token to rewrite: most
            // interactions have none, and their request stays unparsed.
            recorded: (!interaction.during.is_empty() || !interaction.after.is_empty())
                .then(|| interaction.request().and_then(jsonrpc::progress_token))
                .flatten(),
            live: jsonrpc::progress_token(live),
            logs: cross_era::LogFloor::of(translation, live),
            translation,
            streamed: interaction
                .http
                .as_ref()
                .map_or(&[], |http| http.get_stream.as_slice()),
        }
    }

    /// The GET-stream framing of the interaction's message `at`, if it
    /// travelled there.
    pub(super) fn streamed(&self, at: Option<EventRef>) -> Option<&'a SseFrame> {
        let at = at?;
        self.streamed
            .iter()
            .find(|streamed| streamed.event == at)
            .map(|streamed| &streamed.frame)
    }

    /// Progress for the recorded token is re-addressed to the live one, or
    /// dropped when the live request asked for no progress; a log message
    /// the client did not ask for is dropped.
    pub(super) fn rewrite(&self, notification: &Value) -> Option<Value> {
        if !self.logs.keeps(notification) {
            return None;
        }
        let token = notification.pointer("/params/progressToken");
        if token.is_none() || token != self.recorded {
            return Some(notification.clone());
        }
        let live = self.live?;
        let mut notification = notification.clone();
        notification["params"]["progressToken"] = live.clone();
        Some(notification)
    }
}

/// A recorded message written with another id, without copying it.
pub(super) struct WithId<'a>(pub(super) &'a Value, pub(super) Option<&'a Value>);

impl Serialize for WithId<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let WithId(Value::Object(fields), Some(id)) = self else {
            return self.0.serialize(serializer);
        };
        let mut map = serializer.serialize_map(Some(fields.len()))?;
        for (key, value) in fields {
            let value = if key == "id" { *id } else { value };
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}
