//! Assertions on the call log. Each panics with what was expected and the
//! whole log, so a failing test says what the client did instead.

use serde_json::Value;

use super::call::{Call, listing};
use super::server::MockServer;
use crate::json::is_subset;

impl MockServer {
    fn fail(&self, expectation: &str) -> ! {
        let calls = self.calls();
        panic!(
            "mock server: {expectation}\ncalls received ({}):\n{}",
            calls.len(),
            listing(&calls)
        );
    }

    fn tool_calls(&self, name: &str) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|c| c.method == "tools/call" && c.name() == Some(name))
            .collect()
    }

    /// Panics unless tool `name` was called at least once.
    pub fn assert_tool_called(&self, name: &str) {
        if self.tool_calls(name).is_empty() {
            self.fail(&format!(
                "expected tool `{name}` to be called, but it was not"
            ));
        }
    }

    /// Panics unless tool `name` was called exactly `n` times.
    pub fn assert_tool_called_times(&self, name: &str, n: usize) {
        let count = self.tool_calls(name).len();
        if count != n {
            self.fail(&format!(
                "expected tool `{name}` to be called {n} time(s), but it was called {count} time(s)"
            ));
        }
    }

    /// Panics unless tool `name` was called with arguments containing
    /// `arguments_subset` (a recursive subset: extra fields are fine).
    pub fn assert_tool_called_with(&self, name: &str, arguments_subset: Value) {
        let empty = Value::Object(Default::default());
        let matched = self
            .tool_calls(name)
            .iter()
            .any(|c| is_subset(&arguments_subset, c.arguments().unwrap_or(&empty)));
        if !matched {
            self.fail(&format!(
                "expected tool `{name}` to be called with arguments containing {arguments_subset}, but it was not"
            ));
        }
    }

    /// Panics if tool `name` was called.
    pub fn assert_tool_not_called(&self, name: &str) {
        let count = self.tool_calls(name).len();
        if count > 0 {
            self.fail(&format!(
                "expected tool `{name}` not to be called, but it was called {count} time(s)"
            ));
        }
    }

    /// Panics unless the resource at `uri` was read.
    pub fn assert_resource_read(&self, uri: &str) {
        let read = self
            .calls()
            .iter()
            .any(|c| c.method == "resources/read" && c.uri() == Some(uri));
        if !read {
            self.fail(&format!(
                "expected resource `{uri}` to be read, but it was not"
            ));
        }
    }

    /// Panics unless prompt `name` was retrieved (`prompts/get`).
    pub fn assert_prompt_retrieved(&self, name: &str) {
        let got = self
            .calls()
            .iter()
            .any(|c| c.method == "prompts/get" && c.name() == Some(name));
        if !got {
            self.fail(&format!(
                "expected prompt `{name}` to be retrieved, but it was not"
            ));
        }
    }

    /// Panics unless a request or notification with `method` arrived.
    pub fn assert_method_called(&self, method: &str) {
        if !self.calls().iter().any(|c| c.method == method) {
            self.fail(&format!("expected a `{method}` message, but none arrived"));
        }
    }

    /// Panics if any request arrived (handshakes included; notifications
    /// do not count).
    pub fn assert_no_requests(&self) {
        let count = self.calls().iter().filter(|c| c.is_request()).count();
        if count > 0 {
            self.fail(&format!("expected no requests, but {count} arrived"));
        }
    }

    /// Panics unless exactly `n` requests arrived (handshakes included;
    /// notifications do not count).
    pub fn assert_request_count(&self, n: usize) {
        let count = self.calls().iter().filter(|c| c.is_request()).count();
        if count != n {
            self.fail(&format!("expected {n} request(s), but {count} arrived"));
        }
    }
}
