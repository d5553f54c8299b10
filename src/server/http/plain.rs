//! A POST of one plain request, answered from its text.
//!
//! The handler's text path ([`Handler::handle_text`]; replay's is
//! `replay::engine::plain`) answers a request without a tree of it, as
//! over stdio. Over HTTP the message's situation must be known first, and
//! here it is read off the headers alone: a legacy-era server, no OAuth
//! scopes to check, a live session (or none needed), an address and
//! protocol version header that are in order, and no `Mcp-Method` or
//! `Mcp-Name` header to hold against the body. The text path itself turns
//! away `_meta` (the only place a body declares a protocol version), so
//! such a message is in the ordinary situation whatever it says, and is
//! answered exactly as [`super::post`] would answer it. Anything else, or
//! anything the handler hands back, goes the general way.

use std::sync::Arc;

use tokio::time::Instant;

use super::answer::{self, Expect};
use super::flow::{Flow, Spill};
use super::plan::Plan;
use super::posted::Post;
use super::reply::Response;
use super::server::Server;
use super::session::Session;
use crate::wire::situation;

/// A plain request the handler has answered: what it sent, how to send it.
pub(super) struct Played {
    flow: Flow,
    plan: Plan,
    session: Option<Arc<Session>>,
    /// When the POST arrived, which paced events are timed from.
    start: Instant,
}

/// Hands `post` to its handler's text path when the headers settle its
/// situation; `None` with nothing done otherwise.
pub(super) fn play(server: &Server, post: &Post<'_>) -> Option<Played> {
    if server.modern || server.oauth.is_some() || post.body.first() != Some(&b'{') {
        return None;
    }
    let (lookup, session) = server.lookup(post.headers);
    let issues_sessions = server.sessions.issued_any();
    let situation =
        situation::bodiless_situation(post.headers, server.local, lookup, issues_sessions);
    if !situation.is_normal() || !situation::agree_with_undeclared(post.headers) {
        return None;
    }
    let handler = server.handler_for(session.as_deref());
    let spill = session.clone().map_or(Spill::Nowhere, Spill::Session);
    let (mut flow, sink) = Flow::open(spill);
    let position = Arc::clone(&handler)
        .handle_text(&post.body, &sink, &mut flow.tasks)?
        .interaction();
    drop(sink);
    let interaction = position.and_then(|p| handler.recorded(p));
    Some(Played {
        flow,
        plan: Plan::for_request(interaction, post.accept),
        session,
        start: post.start,
    })
}

impl Played {
    /// Answers the POST as its plan says.
    pub(super) async fn respond(self, server: &Arc<Server>) -> Response {
        let expect = Expect {
            answers: 1,
            batch: false,
        };
        answer::respond(
            server,
            self.flow,
            self.plan,
            expect,
            self.session,
            self.start,
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use http::HeaderMap;
    use serde_json::Value;
    use tokio::task::JoinSet;

    use super::*;
    use crate::cassette::{HttpSituation, Transport};
    use crate::protocol::Era;
    use crate::server::http::HttpReplayConfig;
    use crate::server::http::guard::Accept;
    use crate::server::{Handled, Handler, HttpProfile, Sink};

    /// A handler that answers on its text path any line naming `plain`,
    /// and counts which path each message took.
    #[derive(Debug)]
    struct Paths {
        era: Era,
        text: AtomicUsize,
        tree: AtomicUsize,
    }

    impl Handler for Paths {
        fn handle(
            self: Arc<Self>,
            _: Value,
            _: &Sink,
            _: &mut JoinSet<()>,
            _: &HttpSituation,
        ) -> Handled {
            self.tree.fetch_add(1, Ordering::Relaxed);
            Handled::NotRecorded
        }

        fn handle_text(
            self: Arc<Self>,
            line: &[u8],
            _: &Sink,
            _: &mut JoinSet<()>,
        ) -> Option<Handled> {
            let plain = line.windows(5).any(|w| w == b"plain");
            plain.then(|| {
                self.text.fetch_add(1, Ordering::Relaxed);
                Handled::Answered(None)
            })
        }

        fn fork(&self) -> Arc<dyn Handler> {
            Arc::new(Paths::new(self.era))
        }

        fn http_profile(&self) -> HttpProfile {
            HttpProfile {
                transport: Transport::Stdio {
                    command: vec!["server".into()],
                    cwd: None,
                },
                era: self.era,
                sessions: true,
                sessions_without_recording: false,
                listen_streams: false,
                tools: Vec::new(),
            }
        }
    }

    impl Paths {
        fn new(era: Era) -> Self {
            Paths {
                era,
                text: AtomicUsize::new(0),
                tree: AtomicUsize::new(0),
            }
        }
    }

    fn server(era: Era) -> (Server, Arc<Paths>) {
        let paths = Arc::new(Paths::new(era));
        let local = "127.0.0.1:8000".parse().unwrap();
        let handler: Arc<dyn Handler> = paths.clone();
        let server = Server::new(handler, &HttpReplayConfig::new(local), local);
        (server, paths)
    }

    const PLAIN: &str = r#"{"jsonrpc":"2.0","id":1,"method":"plain"}"#;

    /// Whether a POST of `body` with `headers` was answered on the text
    /// path, checking that nothing reached the tree path either way.
    fn played(server: &Server, headers: &[(&str, &str)], body: &str) -> bool {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        let post = Post {
            headers: &map,
            body: bytes::Bytes::copy_from_slice(body.as_bytes()),
            batch: false,
            accept: Accept::of(&map),
            start: Instant::now(),
        };
        play(server, &post).is_some()
    }

    #[tokio::test]
    async fn a_plain_legacy_request_is_answered_from_its_text() {
        let (server, paths) = server(Era::Legacy);
        assert!(played(&server, &[], PLAIN));
        assert!(played(
            &server,
            &[("mcp-protocol-version", "2025-06-18")],
            PLAIN
        ));
        assert_eq!(paths.text.load(Ordering::Relaxed), 2);
        assert_eq!(paths.tree.load(Ordering::Relaxed), 0);
    }

    #[tokio::test]
    async fn anything_the_headers_do_not_settle_goes_the_general_way() {
        let (server, paths) = server(Era::Legacy);
        let refused: &[(&[(&str, &str)], &str)] = &[
            // Headers to hold against the body.
            (&[("mcp-method", "plain")], PLAIN),
            (&[("mcp-name", "plain")], PLAIN),
            (&[("mcp-protocol-version", "2026-07-28")], PLAIN),
            // A foreign origin.
            (&[("origin", "http://elsewhere.example")], PLAIN),
            // A batch, and what the handler hands back.
            (&[], r#"[{"jsonrpc":"2.0","id":1,"method":"plain"}]"#),
            (&[], r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
        ];
        for (headers, body) in refused {
            assert!(!played(&server, headers, body), "{headers:?} {body}");
        }
        assert_eq!(paths.text.load(Ordering::Relaxed), 0);
        assert_eq!(paths.tree.load(Ordering::Relaxed), 0);
    }

    #[tokio::test]
    async fn once_sessions_are_issued_only_a_live_one_is_played() {
        let (server, paths) = server(Era::Legacy);
        // Before any is issued, a session header means nothing (as on the
        // general way).
        assert!(played(&server, &[("mcp-session-id", "unknown")], PLAIN));
        let session = server.open_session(server.session_handler());
        let id = session.id.clone();
        assert!(!played(&server, &[("mcp-session-id", "unknown")], PLAIN));
        assert!(!played(&server, &[], PLAIN));
        assert!(played(&server, &[("mcp-session-id", &id)], PLAIN));
        // The live session's own handler answered that one.
        assert_eq!(paths.text.load(Ordering::Relaxed), 1);
    }

    #[tokio::test]
    async fn a_modern_server_never_takes_the_text_path() {
        let (server, paths) = server(Era::Modern);
        assert!(!played(&server, &[], PLAIN));
        assert_eq!(paths.text.load(Ordering::Relaxed), 0);
    }
}
