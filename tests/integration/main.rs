//! Integration tests, one binary (faster to build and link than one per
//! file). Each module tests one area; `support` holds the shared client.

mod check;
mod cli_errors;
mod credentials;
mod delivery;
mod everything;
mod fixture;
mod http_interop;
mod http_record;
mod http_replay;
#[cfg(feature = "tls")]
mod http_tls;
mod inspect;
mod inspector_sessions;
mod interop_matrix;
mod layers;
mod library;
mod matching;
mod mock;
mod negotiation;
mod oauth;
mod properties;
mod python_sdk;
mod record;
mod redaction;
mod replay;
mod report_commands;
mod review;
mod rmcp_interop;
mod run;
mod run_env;
mod run_http;
mod schema_crosscheck;
mod sdk_run;
mod session;
mod stub_interop;
mod subscriptions;
mod support;
mod tasks;
mod testkit;
mod torture;
mod tsdk_progress;
mod verify;
mod verify_http;
mod verify_sessions;
mod verify_streams;
