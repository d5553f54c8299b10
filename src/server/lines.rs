//! One line of newline-delimited JSON (stdio, in-process streams): a
//! message or a batch, handed to the handler one message at a time. What
//! cannot be read is answered here, for every handler alike.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::handler::Handler;
use super::sink::Sink;
use crate::cassette::HttpSituation;
use crate::jsonrpc::{self, RpcError, codes};

/// Handles one line of input (a JSON-RPC message or batch). Work that
/// must wait for the client is spawned onto `tasks`.
pub fn handle_line<H: Handler + ?Sized>(
    handler: &Arc<H>,
    line: &[u8],
    sink: &Sink,
    tasks: &mut JoinSet<()>,
) {
    if Arc::clone(handler).handle_text(line, sink, tasks).is_some() {
        return;
    }
    let parsed = crate::json::parse_message(line);
    match &parsed {
        Ok(Value::Array(batch)) => sink.note_ids(line, batch, true),
        Ok(message) => sink.note_ids(line, std::slice::from_ref(message), false),
        Err(_) => {}
    }
    match parsed {
        Ok(Value::Array(batch)) => handle_batch(handler, batch, sink, tasks),
        Ok(message) => {
            Arc::clone(handler).handle(message, sink, tasks, &HttpSituation::default());
        }
        Err(e) => sink.respond(&unreadable(line, &e)),
    }
}

/// A JSON-RPC batch (2025-03-26): responses go back as one array.
fn handle_batch<H: Handler + ?Sized>(
    handler: &Arc<H>,
    batch: Vec<Value>,
    sink: &Sink,
    tasks: &mut JoinSet<()>,
) {
    if batch.is_empty() {
        let error = jsonrpc::error_response(
            Value::Null,
            codes::INVALID_REQUEST,
            "Invalid Request: empty batch",
            None,
        );
        sink.respond(&error);
        return;
    }
    let (tx, mut rx) = mpsc::unbounded_channel();
    let batch_sink = sink.with_responses(tx);
    for message in batch {
        Arc::clone(handler).handle(message, &batch_sink, tasks, &HttpSituation::default());
    }
    drop(batch_sink);
    let out = sink.responses.clone();
    tasks.spawn(async move {
        let mut responses = Vec::new();
        while let Some(response) = rx.recv().await {
            responses.push(response);
        }
        if !responses.is_empty() {
            let _ = out.send(jsonrpc::batch(&responses));
        }
    });
}

/// The answer to input that is not a JSON-RPC message: a parse error, or
/// an invalid request when it nests too deep, with the id when one can be
/// read.
fn unreadable(line: &[u8], error: &crate::json::ParseError) -> Value {
    let id = crate::json::readable_id(line).unwrap_or(Value::Null);
    unreadable_error(error).response(id)
}

/// The error object of [`unreadable`].
pub(crate) fn unreadable_error(error: &crate::json::ParseError) -> RpcError {
    let (code, text) = match error {
        crate::json::ParseError::TooDeep(deep) => {
            (codes::INVALID_REQUEST, format!("Invalid Request: {deep}"))
        }
        crate::json::ParseError::Json(_) => {
            let (line, column) = error.position();
            (
                codes::PARSE_ERROR,
                format!("Parse error: {error} (line {line}, column {column})"),
            )
        }
    };
    RpcError::new(code, text)
}

/// The answer to a message that is JSON but not JSON-RPC: an invalid
/// request, with its id when that is a usable one.
pub fn invalid_request(message: &Value, invalid: &impl std::fmt::Display) -> Value {
    let id = jsonrpc::id(message)
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    let text = format!("Invalid Request: {invalid}");
    jsonrpc::error_response(id, codes::INVALID_REQUEST, &text, None)
}
