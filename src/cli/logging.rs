//! Logs: to stderr (stdout is the protocol channel in stdio mode), and
//! masked like cassettes, so a secret that reaches a log line or an error
//! message is printed as its placeholder.

use std::io::{IsTerminal, Write};
use std::sync::RwLock;

use mcpcassette::redact::{RedactConfig, Redactor};

/// The redactor log lines go through: the defaults over the process's
/// environment, built on the first line that needs them (most runs log
/// nothing, and replay replaces it before its first answer), until a
/// command sets its own once it knows its rules.
static REDACTOR: RwLock<Option<Redactor>> = RwLock::new(None);

/// Masks log lines with `redactor` from now on.
pub fn set_redactor(redactor: Redactor) {
    *REDACTOR.write().unwrap_or_else(|p| p.into_inner()) = Some(redactor);
}

/// Masks `text` as log lines are masked.
pub fn mask(text: &str) -> String {
    if let Some(redactor) = &*REDACTOR.read().unwrap_or_else(|p| p.into_inner()) {
        return redactor.redact_text(text).into_owned();
    }
    let mut slot = REDACTOR.write().unwrap_or_else(|p| p.into_inner());
    let redactor = slot.get_or_insert_with(|| {
        let defaults = RedactConfig::from_process_env(Vec::new(), Vec::new());
        Redactor::new(&defaults).unwrap_or_else(|_| Redactor::defaults())
    });
    redactor.redact_text(text).into_owned()
}

/// Sets up `tracing`: level from `MCPCASSETTE_LOG` (default `info`),
/// colour only on a terminal and never with `NO_COLOR`.
pub fn init() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MCPCASSETTE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(|| MaskedStderr)
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .without_time()
        .with_target(false)
        .init();
}

/// Stderr, through the redactor. The formatter writes each event with one
/// `write_all`, so a secret is never split across two writes.
struct MaskedStderr;

impl Write for MaskedStderr {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let masked = mask(&String::from_utf8_lossy(bytes));
        std::io::stderr().lock().write_all(masked.as_bytes())?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
