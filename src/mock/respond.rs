//! How a mock answers: [`Respond`]'s constructors and modifiers (delays,
//! jitter, a limited number of answers, a choice by state), resolved once
//! per call into a [`Leaf`]; and what a handler learns of its call.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};

use super::server::{Answer, Context, HandlerFn, MockServer, Respond};
use crate::jsonrpc::RpcError;

/// The error code of a [`Respond::times`] handler that has used up its
/// answers: in the -32000..-32019 range MCP leaves to implementations.
pub const EXHAUSTED: i64 = -32001;

impl std::fmt::Debug for Respond {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let answer = match &self.answer {
            Answer::Result(value) => format!("result({value})"),
            Answer::Text(text) => format!("text({text:?})"),
            Answer::With(_) => "with(fn)".to_owned(),
            Answer::Error(error) => format!("error({}, {:?})", error.code, error.message),
            Answer::Never => "never".to_owned(),
            Answer::ByState(cases, _) => {
                let states: Vec<&str> = cases.iter().map(|(s, _)| s.as_str()).collect();
                format!("by_state({states:?})")
            }
        };
        f.debug_struct("Respond")
            .field("answer", &answer)
            .field("delay", &self.delay)
            .field("jitter", &self.jitter)
            .field("times", &self.times)
            .finish()
    }
}

impl Respond {
    fn new(answer: Answer) -> Self {
        Respond {
            answer,
            delay: Duration::ZERO,
            jitter: None,
            times: None,
            used: Arc::default(),
        }
    }

    /// Answers with `value` as the whole result: for a tool a full
    /// `CallToolResult`, for a resource a `ReadResourceResult`, for a
    /// prompt a `GetPromptResult`, for completions a `CompleteResult`.
    pub fn result(value: Value) -> Respond {
        Respond::new(Answer::Result(value))
    }

    /// Answers with one piece of text, shaped for what is asked: a tool's
    /// text content (plus, for a tool with an `outputSchema`,
    /// `structuredContent` the schema accepts, as SDK clients require), a
    /// resource's text contents (with its URI and MIME type), a prompt's
    /// single user message, or a single completion value.
    pub fn text(text: &str) -> Respond {
        Respond::new(Answer::Text(text.to_owned()))
    }

    /// Answers with what `f` returns for the arguments (tools, prompts) or
    /// the params (resources, completions), so answers can depend on the
    /// input, the mock's state and the call number.
    pub fn with(
        f: impl Fn(&Value, &Context) -> Result<Value, RpcError> + Send + Sync + 'static,
    ) -> Respond {
        Respond::new(Answer::With(Arc::new(f)))
    }

    /// Answers with a JSON-RPC error.
    pub fn error(code: i64, message: &str) -> Respond {
        Respond::new(Answer::Error(RpcError {
            code,
            message: message.to_owned(),
            data: None,
        }))
    }

    /// Never answers, to simulate a hung server; the request stays pending
    /// until the client cancels it (`notifications/cancelled`) or goes away.
    pub fn never() -> Respond {
        Respond::new(Answer::Never)
    }

    /// Answers as the case for the mock's current state says (the state
    /// before any transition the call itself causes), else as `otherwise`.
    pub fn by_state(
        cases: impl IntoIterator<Item = (&'static str, Respond)>,
        otherwise: Respond,
    ) -> Respond {
        let cases = cases.into_iter().map(|(s, r)| (s.to_owned(), r)).collect();
        Respond::new(Answer::ByState(cases, Box::new(otherwise)))
    }

    /// Answers after `d` more (slow servers, timeouts on the client side).
    pub fn delay(mut self, d: Duration) -> Respond {
        self.delay += d;
        self
    }

    /// Adds a random delay in `range` to each answer; the mock's seed
    /// ([`super::MockBuilder::seed`]) makes the sequence repeatable.
    pub fn jitter(mut self, range: Range<Duration>) -> Respond {
        self.jitter = Some(range);
        self
    }

    /// Answers `n` times, then with a JSON-RPC error ([`EXHAUSTED`]) naming
    /// what is called and `n`: for servers that work only so often.
    pub fn times(mut self, n: usize) -> Respond {
        self.times = Some(n);
        self
    }
}

impl Context {
    /// The mock's state when the request arrived, before any transition it
    /// caused.
    pub fn state(&self) -> String {
        self.state.clone()
    }

    /// The mock itself: its live state, its call log, runtime changes.
    pub fn server(&self) -> &MockServer {
        &self.server
    }

    /// Which call to this tool, resource, prompt or completion handler this
    /// is, counting from 1 (the third call is 3).
    pub fn call_number(&self) -> usize {
        self.call_number
    }

    /// The request's method (`tools/call`, `resources/read`, …).
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The request's whole `params`, `_meta` included.
    pub fn params(&self) -> &Value {
        &self.params
    }
}

/// What is being answered, for [`Respond::text`] and error messages.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    Tool {
        name: String,
        /// Its `outputSchema`, for the `structuredContent` of text answers.
        output_schema: Option<Value>,
    },
    Resource {
        uri: String,
        mime: Option<String>,
    },
    Prompt(String),
    Completion,
}

impl Target {
    /// How error messages name it: "tool `echo`".
    pub(crate) fn label(&self) -> String {
        match self {
            Target::Tool { name, .. } => format!("tool `{name}`"),
            Target::Resource { uri, .. } => format!("resource `{uri}`"),
            Target::Prompt(name) => format!("prompt `{name}`"),
            Target::Completion => "completion handler".to_owned(),
        }
    }

    fn text(&self, text: &str) -> Value {
        match self {
            Target::Tool { output_schema, .. } => {
                let mut result = json!({"content": [{"type": "text", "text": text}]});
                if let Some(schema) = output_schema {
                    result["structuredContent"] = crate::example::from_schema(schema);
                }
                result
            }
            Target::Resource { uri, mime } => {
                let mut contents = json!({"uri": uri});
                if let Some(mime) = mime {
                    contents["mimeType"] = json!(mime);
                }
                contents["text"] = json!(text);
                json!({"contents": [contents]})
            }
            Target::Prompt(_) => json!({"messages": [
                {"role": "user", "content": {"type": "text", "text": text}}
            ]}),
            Target::Completion => {
                json!({"completion": {"values": [text], "total": 1, "hasMore": false}})
            }
        }
    }
}

/// A [`Respond`] resolved for one call: how long to wait, then what.
pub(crate) struct Resolved {
    pub delay: Duration,
    pub leaf: Leaf,
}

/// What to do once the delay is over.
pub(crate) enum Leaf {
    Ready(Result<Value, RpcError>),
    Call(Arc<HandlerFn>),
    Never,
}

impl Leaf {
    /// The answer; `None` for [`Leaf::Never`].
    pub(crate) fn run(self, input: &Value, context: &Context) -> Option<Result<Value, RpcError>> {
        match self {
            Leaf::Ready(answer) => Some(answer),
            Leaf::Call(f) => Some(f(input, context)),
            Leaf::Never => None,
        }
    }
}

impl Respond {
    /// Resolves the tree for one call: counts answers, adds up delays,
    /// picks the case for `state`. `random` draws a number in `0..n`.
    pub(crate) fn resolve(
        &self,
        target: &Target,
        state: &str,
        random: &mut dyn FnMut(u64) -> u64,
    ) -> Resolved {
        let call = self.used.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(n) = self.times
            && call > n
        {
            let message = format!(
                "mock: {} answered the {n} time(s) Respond::times({n}) allows; this is call {call}",
                target.label()
            );
            let error = RpcError {
                code: EXHAUSTED,
                message,
                data: Some(json!({"times": n, "call": call, "target": target.label()})),
            };
            return Resolved {
                delay: Duration::ZERO,
                leaf: Leaf::Ready(Err(error)),
            };
        }
        let mut delay = self.delay;
        if let Some(range) = &self.jitter
            && range.end > range.start
        {
            let span = (range.end - range.start)
                .as_nanos()
                .min(u128::from(u64::MAX)) as u64;
            delay += range.start + Duration::from_nanos(random(span));
        } else if let Some(range) = &self.jitter {
            delay += range.start;
        }
        let leaf = match &self.answer {
            Answer::Result(value) => Leaf::Ready(Ok(value.clone())),
            Answer::Text(text) => Leaf::Ready(Ok(target.text(text))),
            Answer::Error(error) => Leaf::Ready(Err(error.clone())),
            Answer::With(f) => Leaf::Call(Arc::clone(f)),
            Answer::Never => Leaf::Never,
            Answer::ByState(cases, otherwise) => {
                let chosen = cases
                    .iter()
                    .find(|(s, _)| s == state)
                    .map_or(&**otherwise, |(_, r)| r);
                let inner = chosen.resolve(target, state, random);
                delay += inner.delay;
                inner.leaf
            }
        };
        Resolved { delay, leaf }
    }
}
