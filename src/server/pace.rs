//! The timing of replayed server messages.

/// Whether replay keeps the recorded timing of server messages.
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Pace {
    /// Every message as soon as it is ready.
    #[default]
    Fast,
    /// Each message as long after its request as it came when recorded:
    /// over HTTP each SSE event (`http.delays_ms`), over stdio each message
    /// of `during` and the response (`delays_ms`). Interactions without
    /// timings go fast; a message already late (the client took longer to
    /// answer a server request than when recorded) goes at once.
    Recorded,
}
