//! A POST as both ways of answering it see it: the general one (`post`)
//! and the text path (`plain`).

use http::HeaderMap;
use tokio::time::Instant;

use super::guard::Accept;

/// What a POST came with, besides its messages.
pub(super) struct Post<'a> {
    pub(super) headers: &'a HeaderMap,
    /// The body as sent, for ids written back as the client wrote them.
    pub(super) body: bytes::Bytes,
    /// Whether the messages came as a batch, answered by an array.
    pub(super) batch: bool,
    pub(super) accept: Accept,
    pub(super) start: Instant,
}
