//! Masking what a live server sent, after the fact, as the cassette it
//! joins was masked when it was recorded: the new episodes appended to a
//! cassette, and the live version `verify` compares with one.

use super::format::{Event, Interaction};
use crate::redact::Redactor;

/// Masks every message of `interaction` with `redactor`: the client's, the
/// server's, and the client's answers.
pub(crate) fn mask_interaction(interaction: &mut Interaction, redactor: &Redactor) {
    for message in interaction.messages_mut() {
        message.modify(|message| redactor.redact_message(message));
    }
}

/// Masks the messages of one server event with `redactor`: the server's,
/// and the client's answer.
pub(crate) fn mask_event(event: &mut Event, redactor: &Redactor) {
    let messages = match event {
        Event::Notification { notification } => vec![notification],
        Event::ServerRequest {
            server_request,
            client_response,
        } => std::iter::once(server_request)
            .chain(client_response.as_mut())
            .collect(),
    };
    for message in messages {
        message.modify(|message| redactor.redact_message(message));
    }
}
