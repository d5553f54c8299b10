//! Two hand-written MCP clients that the library's
//! `mcpcassette::testkit::TestClient` cannot stand in for, kept here
//! rather than in the test files that use them.
//!
//! - [`Raw`] drives an in-process [`MockServer`] and returns whole
//!   responses, errors included, so a test can assert on the JSON-RPC
//!   error object; it sends params only when there are some, declares the
//!   2025-06-18 era in its handshake, and panics when a response comes out
//!   of order. `TestClient` turns errors into `ClientError`, always sends
//!   `params` and handshakes with the newest legacy version.
//! - [`StdioSession`] drives a stdio server through the library's own
//!   [`StdioLive`] (the transport `record` and `fixture` use) and refuses
//!   every server request with an error. `TestClient` leaves server
//!   requests unanswered, and the shared [`super::peer::Peer`] answers
//!   them with results.

use std::time::{Duration, Instant};

use mcpcassette::client::{Live, StdioLive};
use mcpcassette::mock::MockServer;
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

/// How long [`Raw`] waits for the mock's next message.
const PATIENCE: Duration = Duration::from_secs(10);
const MODERN: &str = "2026-07-28";

/// A raw JSON-RPC client on an in-process connection to a [`MockServer`].
pub struct Raw {
    /// The connection's writing half (a test may shut it down).
    pub write: WriteHalf<DuplexStream>,
    read: Lines<BufReader<ReadHalf<DuplexStream>>>,
    /// Notifications received while waiting for responses.
    pub notes: Vec<Value>,
    next_id: i64,
}

impl Raw {
    /// A client of `mock`, on a connection of its own.
    pub fn new(mock: &MockServer) -> Raw {
        Raw::over(mock.duplex())
    }

    /// A client on `stream`, whose other end a test serves itself.
    pub fn over(stream: DuplexStream) -> Raw {
        let (read, write) = tokio::io::split(stream);
        Raw {
            write,
            read: BufReader::new(read).lines(),
            notes: Vec::new(),
            next_id: 1,
        }
    }

    pub async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.flush().await.unwrap();
    }

    pub async fn next_message(&mut self) -> Value {
        let line = tokio::time::timeout(PATIENCE, self.read.next_line())
            .await
            .expect("the mock answered in time")
            .unwrap()
            .expect("the connection is open");
        serde_json::from_str(&line).unwrap()
    }

    /// The response to request `id`; notifications meanwhile are kept.
    pub async fn response(&mut self, id: i64) -> Value {
        loop {
            let message = self.next_message().await;
            if message.get("method").is_some() {
                self.notes.push(message);
            } else if message["id"] == json!(id) {
                return message;
            } else {
                panic!("expected the response to {id}, got {message}");
            }
        }
    }

    /// Sends a request; returns its id.
    pub async fn start(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut request = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            request["params"] = params;
        }
        self.send(request).await;
        id
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start(method, params).await;
        self.response(id).await
    }

    /// A request declaring 2026-07-28 in `_meta`.
    pub async fn modern(&mut self, method: &str, mut params: Value) -> Value {
        if params.is_null() {
            params = json!({});
        }
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        self.request(method, params).await
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        self.send(message).await;
    }

    /// The legacy handshake; returns the `initialize` result.
    pub async fn initialize(&mut self) -> Value {
        let params = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        });
        let response = self.request("initialize", params).await;
        self.notify("notifications/initialized", Value::Null).await;
        response["result"].clone()
    }

    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        let params = json!({"name": name, "arguments": arguments});
        self.request("tools/call", params).await
    }

    /// Waits for a notification with `method` (kept or still to come).
    pub async fn notification(&mut self, method: &str) -> Value {
        if let Some(at) = self.notes.iter().position(|n| n["method"] == method) {
            return self.notes.remove(at);
        }
        loop {
            let message = self.next_message().await;
            if message["method"] == method {
                return message;
            }
            self.notes.push(message);
        }
    }
}

/// A legacy-era client session with a stdio server, for the tests that
/// read what a server offers.
pub struct StdioSession {
    live: StdioLive,
    next_id: u64,
}

impl StdioSession {
    /// Starts `command` and initialises it; returns the session and the
    /// `initialize` result.
    pub fn start(command: &[String]) -> (StdioSession, Value) {
        let mut session = StdioSession {
            live: StdioLive::spawn(command, None).unwrap(),
            next_id: 0,
        };
        let init = session.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        )["result"]
            .clone();
        session
            .live
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .unwrap();
        (session, init)
    }

    /// The response to one request; server requests that come meanwhile
    /// are refused.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        let live = &mut self.live;
        live.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = live
                .recv(left)
                .unwrap()
                .unwrap_or_else(|| panic!("no answer to {method}"));
            if message.get("id") == Some(&id) && message.get("method").is_none() {
                return message;
            }
            if message.get("id").is_some() && message.get("method").is_some() {
                live.send(&json!({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}}))
                    .unwrap();
            }
        }
    }

    pub fn close(mut self) {
        self.live.close();
    }
}
