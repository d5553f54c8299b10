//! Integration tests, one binary (faster to build and link than one per
//! file). Each module tests one area; `support` holds the shared client.

mod check;
mod everything;
mod fixture;
mod http_interop;
mod http_record;
mod http_replay;
#[cfg(feature = "tls")]
mod http_tls;
mod inspect;
mod interop_matrix;
mod library;
mod matching;
mod mock;
mod properties;
mod python_sdk;
mod record;
mod redaction;
mod replay;
mod review;
mod rmcp_interop;
mod run;
mod schema_crosscheck;
mod session;
mod support;
mod testkit;
mod verify;
mod verify_http;
