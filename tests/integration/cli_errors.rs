//! Errors say each cause once: an OS error wrapped by one of our
//! errors is not repeated by the chain printed after it.

use std::error::Error;
use std::process::Stdio;
use std::sync::Arc;

use mcpcassette::cassette::{KeyRule, ResolveError, RulesError};
use mcpcassette::cli_support::chain;
use mcpcassette::client::LiveError;
use mcpcassette::redact::RedactError;
use mcpcassette::replay::UpstreamFailure;
use mcpcassette::verify::DriftError;
use mcpcassette::{CassetteError, RecordError};

use crate::support::{mcpcassette, root};

#[test]
fn a_missing_file_is_reported_once_per_command() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let missing = missing.to_str().unwrap();
    let cases: [&[&str]; 5] = [
        &["verify", missing],
        &["replay", missing],
        &["check", missing],
        &[
            "run",
            "--mode",
            "all",
            "--cassette",
            missing,
            "--",
            "/nonexistent/mcpcassette-server",
        ],
        &["serve", missing],
    ];
    for args in cases {
        let output = mcpcassette().args(args).output().unwrap();
        // `check` reports an unreadable file with its findings, on stdout.
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned()
            + &String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(
            stderr.matches("(os error 2)").count(),
            1,
            "{args:?}: said once:\n{stderr}"
        );
        assert!(
            stderr.contains("No such file or directory (os error 2)"),
            "{args:?}: {stderr}"
        );
    }
}

/// The error line of a failed command: the message after `ERROR` (our
/// log) or `error:` (clap's), trimmed.
fn error_line(stderr: &str) -> Option<&str> {
    stderr.lines().find_map(|line| {
        let line = line.trim_start();
        line.strip_prefix("ERROR ")
            .or_else(|| line.strip_prefix("error: "))
            .map(str::trim)
    })
}

#[test]
fn no_error_says_a_cause_twice() {
    let dir = tempfile::tempdir().unwrap();
    let demo = root().join("cassettes/demo-legacy.json");
    let demo = demo.to_str().unwrap();
    let folder = dir.path().to_str().unwrap();
    let not_rules = dir.path().join("not-rules.json");
    std::fs::write(&not_rules, r#"{"strategy": 3}"#).unwrap();
    let not_rules = not_rules.to_str().unwrap();
    let bad_rules = dir.path().join("bad-rules.json");
    std::fs::write(&bad_rules, r#"{"redact": [{"regex": "acct-["}]}"#).unwrap();
    let bad_rules = bad_rules.to_str().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    let cassette = dir.path().join("new.json");
    let cassette = cassette.to_str().unwrap();
    // Each command, and what its error must still say of the cause.
    let cases: [(&[&str], &str); 7] = [
        // An unreadable cassette: the OS's reason.
        (&["replay", folder], "(os error 21)"),
        // Rules that are not rules: serde's reason.
        (&["replay", demo, "--rules", not_rules], "expected"),
        // Rules that do not build: the regex's reason.
        (&["replay", demo, "--rules", bad_rules], "acct-["),
        // A `--key` whose selector does not parse: the selector's reason.
        (&["replay", demo, "--key", "tools/call=params"], "`params`"),
        // An unreachable server: the connection's reason.
        (
            &["stub", "--url", "http://127.0.0.1:9/mcp", "--timeout", "5"],
            "(os error",
        ),
        // A server that cannot start: the OS's reason.
        (
            &[
                "run",
                "--mode",
                "all",
                "--cassette",
                cassette,
                "--",
                "/nonexistent/mcpcassette-server",
            ],
            "(os error 2)",
        ),
        // An address taken already: the OS's reason.
        (
            &[
                "record",
                "--cassette",
                cassette,
                "--upstream",
                "http://127.0.0.1:9/mcp",
                "--listen",
                &taken,
            ],
            "(os error",
        ),
    ];
    for (args, cause) in cases {
        let output = mcpcassette()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        let line = error_line(&stderr).unwrap_or_else(|| panic!("{args:?}: no error:\n{stderr}"));
        assert!(line.contains(cause), "{args:?}: the cause is lost: {line}");
        let segments: Vec<&str> = line.split(": ").collect();
        for (at, segment) in segments.iter().enumerate() {
            assert!(
                !segments[at + 1..].contains(segment),
                "{args:?}: `{segment}` is said twice: {line}"
            );
        }
    }
}

fn io() -> std::io::Error {
    std::io::Error::other("the disk is on fire")
}

fn not_json() -> serde_json::Error {
    serde_json::from_str::<serde_json::Value>("{").unwrap_err()
}

fn spawn() -> LiveError {
    LiveError::Spawn {
        program: "server".into(),
        source: io(),
    }
}

/// Every kind of error the library makes with a source, one of each.
fn with_sources() -> Vec<Box<dyn Error>> {
    let selector = "tools/call=params".parse::<KeyRule>().unwrap_err();
    // Not a literal: clippy refuses a literal regex that does not build.
    let regex = || regex::Regex::new(std::hint::black_box("acct-[")).unwrap_err();
    let errors: Vec<Box<dyn Error>> = vec![
        Box::new(CassetteError::Read {
            path: "c.json".into(),
            source: io(),
        }),
        Box::new(CassetteError::Write {
            path: "c.json".into(),
            source: io(),
        }),
        Box::new(ResolveError::Read {
            path: "r.json".into(),
            source: io(),
        }),
        Box::new(ResolveError::Parse {
            path: "r.json".into(),
            source: not_json(),
        }),
        Box::new(ResolveError::Invalid {
            path: Some("r.json".into()),
            source: RulesError::CaseAnswer { case: 0 },
        }),
        Box::new(selector),
        Box::new(RedactError::RegexSet(regex())),
        Box::new(RulesError::Redaction(RedactError::RegexSet(regex()))),
        Box::new(RecordError::Wait(io())),
        Box::new(RecordError::Signals(nix::Error::EINVAL)),
        Box::new(RecordError::Bind {
            addr: "127.0.0.1:1".parse().unwrap(),
            source: io(),
        }),
        Box::new(RecordError::Live(spawn())),
        Box::new(DriftError::Spawn {
            program: "server".into(),
            source: io(),
        }),
        Box::new(DriftError::Live(spawn())),
        Box::new(UpstreamFailure::Live(Arc::new(spawn()))),
        Box::new(UpstreamFailure::Unwaitable(Arc::new(io()))),
        Box::new(spawn()),
        Box::new(LiveError::Wait(io())),
        Box::new(LiveError::Write(io())),
        Box::new(LiveError::Runtime(io())),
        Box::new(mcpcassette::ModeError::ReadProject {
            path: "mcpcassette.toml".into(),
            source: io(),
        }),
        Box::new(mcpcassette::check::CheckError::Read {
            path: "c.json".into(),
            source: io(),
        }),
        Box::new(mcpcassette::fixture::FixtureError::Read {
            path: "f.json".into(),
            source: io(),
        }),
        Box::new(mcpcassette::schema::OfficialSchemaError::Read {
            path: "schema.json".into(),
            source: io(),
        }),
        Box::new(mcpcassette::schema::OfficialSchemaError::Parse {
            path: "schema.json".into(),
            source: not_json(),
        }),
        Box::new(mcpcassette::testkit::ClientError::Rpc(
            mcpcassette::RpcError::new(-32601, "Method not found"),
        )),
        Box::new(mcpcassette::stub::StubError::Live(spawn())),
    ];
    #[cfg(feature = "tls")]
    let errors = errors
        .into_iter()
        .chain([
            Box::new(LiveError::TlsConfig(rustls::Error::General("no".into()))) as Box<dyn Error>,
            Box::new(LiveError::CaFile {
                var: "MCPCASSETTE_CA_FILE",
                path: "ca.pem".into(),
                source: Box::new(io()),
            }),
        ])
        .collect();
    errors
}

/// Each error says what went wrong at its own level and leaves its cause
/// to the chain, which says it once, after it.
#[test]
fn no_message_repeats_its_source() {
    for error in with_sources() {
        let message = error.to_string();
        let source = error.source().map(ToString::to_string);
        let source = source.unwrap_or_else(|| panic!("`{message}` has no source"));
        assert!(
            !message.contains(&source),
            "`{message}` repeats its source `{source}`"
        );
        let cause = chain(error.source().unwrap());
        assert_eq!(chain(error.as_ref()), format!("{message}: {cause}"));
    }
}
