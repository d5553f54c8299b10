//! How to answer a POST: as recorded when the interaction travelled over
//! HTTP ("faithful first"), else the way a typical server would.

use http::StatusCode;

use super::guard::Accept;
use super::sse::FrameSpec;
use crate::cassette::Interaction;

/// The body of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Shape {
    /// The response as one JSON body.
    Json,
    /// An SSE stream: the request's events, then its response.
    Sse,
    /// A recorded body that is no JSON-RPC message (an error page, say).
    Raw {
        content_type: Option<String>,
        body: String,
    },
    /// No body (202 Accepted).
    Empty,
}

/// Everything needed to answer one POST.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    pub status: StatusCode,
    /// Whether `status` was recorded (else replay chose it).
    pub recorded: bool,
    pub shape: Shape,
    /// Recorded SSE framing, one entry per event.
    pub frames: Vec<FrameSpec>,
    /// Recorded milliseconds from the request to each SSE event.
    pub delays: Vec<u64>,
    /// The recorded server never answered (e.g. `subscriptions/listen`
    /// still open when recording stopped): the stream stays open.
    pub open_ended: bool,
    /// An `initialize` answer that opens a session.
    pub issues_session: bool,
}

impl Plan {
    /// For a POST carrying requests; `interaction` answers the (first) one.
    pub(super) fn for_request(interaction: Option<&Interaction>, accept: Accept) -> Plan {
        let open_ended = interaction.is_some_and(|i| i.response.is_none());
        let succeeded = interaction
            .and_then(|i| i.response.as_ref())
            .is_some_and(|r| r.has_member("result"));
        let mut plan = match interaction.and_then(|i| i.http.as_ref()) {
            Some(http) => {
                let frames = http.sse.iter().map(|frame| FrameSpec {
                    id: frame.id.clone(),
                    event: frame.event.clone(),
                    retry: frame.retry,
                    priming: frame.priming,
                });
                Plan {
                    status: status(http.status),
                    recorded: true,
                    shape: recorded_shape(
                        http.status,
                        http.content_type.as_deref(),
                        http.body.as_deref(),
                    )
                    .unwrap_or_else(|| adaptive(interaction, accept)),
                    frames: frames.collect(),
                    delays: http.delays_ms.clone(),
                    open_ended,
                    issues_session: http.issued_session,
                }
            }
            // A stdio recording's timing is that of `during` and the
            // response: the events of the stream replay makes of them.
            None => Plan {
                shape: adaptive(interaction, accept),
                delays: interaction.map(|i| i.delays_ms.clone()).unwrap_or_default(),
                issues_session: true,
                ..Plan::new(StatusCode::OK, open_ended)
            },
        };
        plan.issues_session &= succeeded;
        plan
    }

    /// For a POST of notifications or client responses: 202, unless the
    /// matched notification was recorded with another answer.
    pub(super) fn for_notification(interaction: Option<&Interaction>) -> Plan {
        let Some(http) = interaction.and_then(|i| i.http.as_ref()) else {
            return Plan {
                shape: Shape::Empty,
                ..Plan::new(StatusCode::ACCEPTED, false)
            };
        };
        let shape = match &http.body {
            Some(body) => Shape::Raw {
                content_type: http.content_type.clone(),
                body: body.clone(),
            },
            None => Shape::Empty,
        };
        Plan {
            status: status(http.status),
            recorded: true,
            shape,
            ..Plan::new(StatusCode::ACCEPTED, false)
        }
    }

    fn new(status: StatusCode, open_ended: bool) -> Plan {
        Plan {
            status,
            recorded: false,
            shape: Shape::Empty,
            frames: Vec::new(),
            delays: Vec::new(),
            open_ended,
            issues_session: false,
        }
    }
}

fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::OK)
}

/// The recorded body's shape; `None` when the recording does not say
/// (no content type on an answer that was not bodiless).
fn recorded_shape(status: u16, content_type: Option<&str>, body: Option<&str>) -> Option<Shape> {
    if let Some(body) = body {
        return Some(Shape::Raw {
            content_type: content_type.map(str::to_owned),
            body: body.to_owned(),
        });
    }
    let essence = content_type.map(|c| {
        c.split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
    });
    match essence.as_deref() {
        Some("text/event-stream") => Some(Shape::Sse),
        Some("application/json") => Some(Shape::Json),
        None if matches!(status, 202 | 204) => Some(Shape::Empty),
        _ => None,
    }
}

/// For answers recorded without HTTP: SSE when something must travel before
/// the response (events, or a response that never came) and the client
/// takes SSE; else JSON if the client takes it; else SSE.
fn adaptive(interaction: Option<&Interaction>, accept: Accept) -> Shape {
    let streams = interaction.is_some_and(|i| !i.during.is_empty() || i.response.is_none());
    if (streams && accept.sse) || !accept.json {
        Shape::Sse
    } else {
        Shape::Json
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const BOTH: Accept = Accept {
        json: true,
        sse: true,
    };
    const JSON_ONLY: Accept = Accept {
        json: true,
        sse: false,
    };
    const SSE_ONLY: Accept = Accept {
        json: false,
        sse: true,
    };

    fn interaction(value: serde_json::Value) -> Interaction {
        serde_json::from_value(value).unwrap()
    }

    fn call() -> serde_json::Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"})
    }

    #[test]
    fn stdio_recordings_answer_like_a_typical_server() {
        let plain = interaction(json!({"request": call(), "response": {"id": 1, "result": {}}}));
        assert_eq!(Plan::for_request(Some(&plain), BOTH).shape, Shape::Json);
        assert_eq!(Plan::for_request(Some(&plain), SSE_ONLY).shape, Shape::Sse);
        let progress = interaction(json!({
            "request": call(),
            "during": [{"notification": {"method": "notifications/progress"}}],
            "response": {"id": 1, "result": {}},
        }));
        assert_eq!(Plan::for_request(Some(&progress), BOTH).shape, Shape::Sse);
        assert_eq!(
            Plan::for_request(Some(&progress), JSON_ONLY).shape,
            Shape::Json
        );
        let timed = interaction(json!({
            "request": call(),
            "during": [{"notification": {"method": "notifications/progress"}}],
            "response": {"id": 1, "result": {}},
            "delays_ms": [5, 9],
        }));
        assert_eq!(Plan::for_request(Some(&timed), BOTH).delays, vec![5, 9]);
        let open = interaction(json!({"request": call()}));
        let plan = Plan::for_request(Some(&open), BOTH);
        assert!(plan.open_ended && plan.shape == Shape::Sse);
        assert_eq!(Plan::for_request(None, BOTH).shape, Shape::Json);
    }

    #[test]
    fn http_recordings_answer_as_recorded() {
        let error_page = interaction(json!({
            "request": call(),
            "http": {"status": 500, "content_type": "text/html", "body": "<h1>boom</h1>"},
        }));
        let plan = Plan::for_request(Some(&error_page), BOTH);
        assert_eq!(plan.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(matches!(plan.shape, Shape::Raw { ref body, .. } if body == "<h1>boom</h1>"));

        let streamed = interaction(json!({
            "request": call(),
            "response": {"id": 1, "result": {}},
            "http": {"status": 200, "content_type": "text/event-stream",
                     "sse": [{"id": "0", "retry": 500, "priming": true}, {"id": "1"}],
                     "delays_ms": [1, 2]},
        }));
        let plan = Plan::for_request(Some(&streamed), JSON_ONLY);
        assert_eq!(plan.shape, Shape::Sse, "the recording wins over Accept");
        assert_eq!(plan.frames.len(), 2);
        assert!(plan.frames[0].priming);
        assert_eq!(plan.delays, vec![1, 2]);
    }

    #[test]
    fn sessions_come_from_successful_initializes_that_issued_one() {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"});
        let ok = json!({"id": 1, "result": {}});
        let stdio = interaction(json!({"request": init, "response": ok}));
        assert!(Plan::for_request(Some(&stdio), BOTH).issues_session);
        let stateless = interaction(json!({"request": init, "response": ok,
            "http": {"status": 200, "content_type": "application/json"}}));
        assert!(!Plan::for_request(Some(&stateless), BOTH).issues_session);
        let failed = interaction(json!({"request": init, "response": {"id": 1, "error": {}}}));
        assert!(!Plan::for_request(Some(&failed), BOTH).issues_session);
    }

    #[test]
    fn notifications_get_202_unless_recorded_otherwise() {
        let plan = Plan::for_notification(None);
        assert_eq!(
            (plan.status, plan.shape),
            (StatusCode::ACCEPTED, Shape::Empty)
        );
        let note = interaction(json!({
            "notification": {"jsonrpc": "2.0", "method": "notifications/initialized"},
            "http": {"status": 400, "content_type": "text/plain", "body": "no"},
        }));
        let plan = Plan::for_notification(Some(&note));
        assert_eq!(plan.status, StatusCode::BAD_REQUEST);
        assert!(matches!(plan.shape, Shape::Raw { .. }));
    }
}
