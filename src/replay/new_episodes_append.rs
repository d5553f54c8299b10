//! `new-episodes` mode, around the replay: where the server that answers
//! the misses runs ([`recorded_place`]), and how what it answered joins
//! the cassette ([`append_new_episodes`]), masked as the cassette's own
//! recording was.

use std::path::{Path, PathBuf};

use super::session_traffic::place_in;
use super::upstream::Episodes;
use crate::cassette::{
    self, Cassette, CassetteError, Event, Transport, is_relative, mask_event, mask_interaction,
};
use crate::redact::{self, Redactor};

/// `command` as given, unless it is the cassette's own relative command
/// and the cassette says it was recorded in another directory that exists
/// here: then it runs from there, as `verify` does. The command to run,
/// and the directory to run it in when not this one.
pub fn recorded_place(
    recorded: &Cassette,
    path: &Path,
    command: &[String],
) -> (Vec<String>, Option<PathBuf>) {
    let Transport::Stdio {
        command: recorded_command,
        cwd: Some(cwd),
    } = &recorded.transport
    else {
        return (command.to_vec(), None);
    };
    let here = std::env::current_dir().unwrap_or_default();
    // Masked as recording masked it: with the environment's secrets.
    let masked = match Redactor::new(&recorded.rules.redaction()) {
        Ok(redactor) => redactor.mask_command(command),
        Err(_) => redact::mask_command(command),
    };
    let same = masked == *recorded_command;
    match cassette::recorded_place(command, Some(cwd), path, &here) {
        Some((moved, dir)) if same && is_relative(command) && dir != here => {
            tracing::info!(
                "running the recorded server command from {}, where it was recorded",
                dir.display()
            );
            (moved, Some(dir))
        }
        _ => (command.to_vec(), None),
    }
}

/// Appends what the server answered to `recorded`, the cassette at `path`
/// as it is now, masked by `redactor` as the cassette's own recording
/// was: the `session` traffic it lacked after the handshake (as `record`
/// files it), the new `episodes` at the end. The cassette is written one
/// interaction at a time, as the episodes are read from where the run
/// kept them; with nothing new it is left alone.
///
/// # Errors
///
/// [`CassetteError`] when the episodes cannot be read back or the
/// cassette cannot be written.
pub fn append_new_episodes(
    recorded: &Cassette,
    path: &Path,
    redactor: &Redactor,
    mut session: Vec<Event>,
    episodes: Episodes,
) -> Result<(), CassetteError> {
    let mut episodes = episodes.peekable();
    if episodes.peek().is_none() && session.is_empty() {
        return Ok(());
    }
    for event in &mut session {
        mask_event(event, redactor);
    }
    let mut header = recorded.header();
    let after = place_in(recorded);
    if after.is_none() {
        header.opening.append(&mut session);
    }
    let kept = recorded
        .interactions
        .iter()
        .enumerate()
        .map(|(n, interaction)| {
            let mut interaction = interaction.clone();
            if Some(n) == after {
                interaction.after.append(&mut session);
            }
            Ok(interaction)
        });
    let mut appended = 0;
    let new = episodes.map(|read| {
        let mut interaction = read?;
        mask_interaction(&mut interaction, redactor);
        appended += 1;
        Ok(interaction)
    });
    cassette::save_streamed(path, &header, kept.chain(new))?;
    tracing::info!(
        "appended {appended} new interaction(s) to {}",
        path.display()
    );
    Ok(())
}
