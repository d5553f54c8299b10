//! A test kit for Rust tests: a [`MockServer`] and a connected, initialised
//! [`TestClient`] per test, with assertions that read like the test.
//!
//! ```no_run
//! # async fn example() {
//! use mcpcassette::mock::{MockServer, Respond, Tool};
//! use mcpcassette::testkit::TestKit;
//! use serde_json::json;
//!
//! let mock = MockServer::builder()
//!     .tool(Tool::new("add"), Respond::text("3"))
//!     .build();
//! let kit = TestKit::start(mock).await;
//! kit.assert_tool_exists("add").await;
//! kit.assert_tool_returns("add", json!({"a": 1, "b": 2}),
//!     json!({"content": [{"type": "text", "text": "3"}]})).await;
//! kit.mock.assert_tool_called_times("add", 1);
//! # }
//! ```

mod client;

pub use client::{ClientError, TestClient};

use serde_json::Value;

use crate::mock::MockServer;
use crate::protocol::Era;

/// A mock server and a client connected to it in-process.
#[derive(Debug)]
pub struct TestKit {
    /// The server, for its call log and assertions.
    pub mock: MockServer,
    /// The client, initialised.
    pub client: TestClient,
}

impl TestKit {
    /// Connects a legacy-era client (`initialize` with the newest legacy
    /// version) to `mock`.
    pub async fn start(mock: MockServer) -> TestKit {
        Self::start_in(mock, Era::Legacy).await
    }

    /// Connects a client of `era` to `mock`.
    pub async fn start_in(mock: MockServer, era: Era) -> TestKit {
        let client = TestClient::connect(mock.duplex(), era)
            .await
            .unwrap_or_else(|e| {
                let e = crate::error_chain::chain(&e);
                panic!("the test client could not connect: {e}")
            });
        TestKit { mock, client }
    }

    /// Panics unless the server lists a tool named `name`, naming the
    /// tools it does list.
    #[track_caller]
    pub fn assert_tool_exists(&self, name: &str) -> impl Future<Output = ()> + '_ {
        let caller = std::panic::Location::caller();
        let name = name.to_owned();
        async move {
            let tools = self.client.list_tools().await.unwrap_or_else(|e| {
                let e = crate::error_chain::chain(&e);
                panic!("{caller}: tools/list failed: {e}");
            });
            let names: Vec<&str> = tools
                .iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str))
                .collect();
            assert!(
                names.contains(&name.as_str()),
                "{caller}: no tool `{name}`; the server lists: {}",
                if names.is_empty() {
                    "no tools".to_owned()
                } else {
                    names.join(", ")
                }
            );
        }
    }

    /// Calls `name` with `arguments` and panics unless the result contains
    /// `expected` (a recursive subset: objects may have more fields, arrays
    /// match by length and position), showing both.
    #[track_caller]
    pub fn assert_tool_returns(
        &self,
        name: &str,
        arguments: Value,
        expected: Value,
    ) -> impl Future<Output = ()> + '_ {
        let caller = std::panic::Location::caller();
        let name = name.to_owned();
        async move {
            let result = match self.client.call_tool(&name, arguments.clone()).await {
                Ok(result) => result,
                Err(e) => {
                    let e = crate::error_chain::chain(&e);
                    panic!("{caller}: calling `{name}` with {arguments} failed: {e}")
                }
            };
            if let Some(mismatch) = crate::json::first_mismatch(&expected, &result) {
                panic!(
                    "{caller}: `{name}` with {arguments} did not return what was expected (at `{}`: {})\nexpected (subset): {}\nreturned: {}",
                    mismatch.pointer,
                    mismatch.reason,
                    pretty(&expected),
                    pretty(&result)
                );
            }
        }
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}
