//! A small MCP client for tests: connects over any byte stream (a duplex
//! to an in-process mock, a child's stdio), does the handshake of either
//! era, and sends requests with as many in flight as the test likes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use crate::jsonrpc::{self, Kind, RpcError};
use crate::protocol::{self, Era};

/// Why a test client call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    #[error("JSON-RPC error")]
    Rpc(#[source] RpcError),
    /// The connection closed before the answer came.
    #[error("the connection closed before `{0}` was answered")]
    Closed(String),
}

type Waiters = Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>;

/// A connected, initialised MCP client.
#[derive(Debug)]
pub struct TestClient {
    era: Era,
    version: String,
    outgoing: mpsc::UnboundedSender<Value>,
    waiters: Waiters,
    notifications: Arc<Mutex<Vec<Value>>>,
    next_id: AtomicI64,
    /// What the handshake answered (`initialize` or `server/discover`).
    pub handshake: Value,
}

impl TestClient {
    /// Connects over `stream` and does the handshake of `era`: `initialize`
    /// with the newest legacy version, then `notifications/initialized`;
    /// or `server/discover`, with `_meta` on every request afterwards.
    pub async fn connect<S>(stream: S, era: Era) -> Result<TestClient, ClientError>
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let (reader, mut writer) = tokio::io::split(stream);
        let (outgoing, mut queue) = mpsc::unbounded_channel::<Value>();
        let waiters: Waiters = Arc::default();
        let notifications = Arc::new(Mutex::new(Vec::new()));
        tokio::spawn(async move {
            while let Some(message) = queue.recv().await {
                let mut line = serde_json::to_vec(&message).expect("a Value serialises");
                line.push(b'\n');
                if writer.write_all(&line).await.is_err() || writer.flush().await.is_err() {
                    break;
                }
            }
        });
        tokio::spawn(read_loop(
            reader,
            waiters.clone(),
            notifications.clone(),
            outgoing.clone(),
        ));
        let version = match era {
            Era::Modern => protocol::MODERN_VERSION,
            _ => protocol::LATEST_LEGACY_VERSION,
        };
        let mut client = TestClient {
            era,
            version: version.to_owned(),
            outgoing,
            waiters,
            notifications,
            next_id: AtomicI64::new(1),
            handshake: Value::Null,
        };
        client.handshake = match era {
            Era::Modern => client.request("server/discover", json!({})).await?,
            _ => {
                let result = client
                    .request(
                        "initialize",
                        json!({
                            "protocolVersion": version,
                            "capabilities": {},
                            "clientInfo": {"name": "mcpcassette-testkit", "version": env!("CARGO_PKG_VERSION")},
                        }),
                    )
                    .await?;
                client.notify("notifications/initialized", json!({}));
                result
            }
        };
        Ok(client)
    }

    /// Sends a request and waits for its result.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiters
            .lock()
            .expect("waiters")
            .insert(jsonrpc::id_key(&json!(id)), tx);
        let message =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": self.with_meta(params)});
        let _ = self.outgoing.send(message);
        let response = rx
            .await
            .map_err(|_| ClientError::Closed(method.to_owned()))?;
        match jsonrpc::error_of(&response) {
            Some(error) => Err(ClientError::Rpc(error)),
            None => Ok(response.get("result").cloned().unwrap_or(Value::Null)),
        }
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        let _ = self
            .outgoing
            .send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The tools the server lists (all pages).
    pub async fn list_tools(&self) -> Result<Vec<Value>, ClientError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let page = self.request("tools/list", params).await?;
            tools.extend(page["tools"].as_array().cloned().unwrap_or_default());
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(tools),
            }
        }
    }

    /// Calls a tool.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// Notifications received so far, in order.
    pub fn notifications(&self) -> Vec<Value> {
        self.notifications.lock().expect("notifications").clone()
    }

    /// The era the client speaks.
    pub fn era(&self) -> Era {
        self.era
    }

    /// Modern requests carry the protocol version in `_meta`.
    fn with_meta(&self, mut params: Value) -> Value {
        if self.era == Era::Modern
            && let Some(object) = params.as_object_mut()
        {
            let meta = object.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(protocol::META_PROTOCOL_VERSION.into(), json!(self.version));
            }
        }
        params
    }
}

/// Files responses with their waiters and keeps notifications; server
/// requests (sampling, elicitation, roots) are refused with -32601, since a
/// test client offers no capabilities.
async fn read_loop<R: AsyncRead + Unpin + Send + 'static>(
    reader: R,
    waiters: Waiters,
    notifications: Arc<Mutex<Vec<Value>>>,
    outgoing: mpsc::UnboundedSender<Value>,
) {
    let mut lines = BufReader::new(reader).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let messages = match message {
            Value::Array(batch) => batch,
            single => vec![single],
        };
        for message in messages {
            match jsonrpc::classify(&message) {
                Ok(Kind::Response) => {
                    let key = jsonrpc::id(&message).map(jsonrpc::id_key);
                    let waiter = key.and_then(|k| waiters.lock().expect("waiters").remove(&k));
                    if let Some(waiter) = waiter {
                        let _ = waiter.send(message);
                    }
                }
                Ok(Kind::Request) => {
                    let id = jsonrpc::id(&message).cloned().unwrap_or(Value::Null);
                    let _ = outgoing.send(jsonrpc::error_response(
                        id,
                        jsonrpc::codes::METHOD_NOT_FOUND,
                        "the test client offers no client capabilities",
                        None,
                    ));
                }
                _ => notifications.lock().expect("notifications").push(message),
            }
        }
    }
    // Closed: every waiter learns it by its sender being dropped.
    waiters.lock().expect("waiters").clear();
}
