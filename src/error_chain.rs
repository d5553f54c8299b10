//! An error told with its causes. Each error's message says what went
//! wrong at its own level and never repeats its source (the source is
//! reachable through [`std::error::Error::source`] instead), so whatever
//! shows an error to a person walks the chain: [`chain`].

/// `error` and its causes, outermost first, `: `-separated
/// (`cannot read a.json: No such file or directory (os error 2)`).
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use std::error::Error;
    use std::sync::Arc;

    use super::chain;
    use crate::cassette::{CassetteError, KeyRule, ResolveError, RulesError};
    use crate::drift::DriftError;
    use crate::live::LiveError;
    use crate::record::RecordError;
    use crate::redact::RedactError;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read x.json")]
    struct Read {
        source: std::io::Error,
    }

    #[test]
    fn says_each_cause_after_the_error() {
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        let expected = format!("cannot read x.json: {missing}");
        assert_eq!(chain(&Read { source: missing }), expected);
        assert_eq!(chain(&std::fmt::Error), std::fmt::Error.to_string());
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

    /// Every error the crate makes with a source, one of each kind.
    fn with_sources() -> Vec<Box<dyn Error>> {
        let selector = "tools/call=params".parse::<KeyRule>().unwrap_err();
        let regex = regex::Regex::new("acct-[").unwrap_err();
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
            Box::new(RedactError::RegexSet(regex)),
            Box::new(RulesError::Redaction(RedactError::RegexSet(
                regex::Regex::new("(").unwrap_err(),
            ))),
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
            Box::new(crate::replay::UpstreamFailure::Live(Arc::new(spawn()))),
            Box::new(crate::replay::UpstreamFailure::Unwaitable(Arc::new(io()))),
            Box::new(spawn()),
            Box::new(LiveError::Wait(io())),
            Box::new(LiveError::Write(io())),
            Box::new(LiveError::Runtime(io())),
            Box::new(crate::mode::ModeError::ReadProject {
                path: "mcpcassette.toml".into(),
                source: io(),
            }),
            Box::new(crate::check::CheckError::Read {
                path: "c.json".into(),
                source: io(),
            }),
            Box::new(crate::fixture::FixtureError::Read {
                path: "f.json".into(),
                source: io(),
            }),
            Box::new(crate::schema::OfficialSchemaError::Read {
                path: "schema.json".into(),
                source: io(),
            }),
            Box::new(crate::schema::OfficialSchemaError::Parse {
                path: "schema.json".into(),
                source: not_json(),
            }),
            Box::new(crate::testkit::ClientError::Rpc(crate::RpcError::new(
                -32601,
                "Method not found",
            ))),
            Box::new(crate::stub::StubError::Live(spawn())),
        ];
        #[cfg(feature = "tls")]
        let errors = errors
            .into_iter()
            .chain([
                Box::new(LiveError::TlsConfig(rustls::Error::General("no".into())))
                    as Box<dyn Error>,
                Box::new(LiveError::CaFile {
                    var: "MCPCASSETTE_CA_FILE",
                    path: "ca.pem".into(),
                    source: Box::new(io()),
                }),
            ])
            .collect();
        errors
    }

    /// Each error says what went wrong at its level; its cause is the
    /// chain's to say, once.
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
            assert_eq!(
                chain(error.as_ref()),
                format!("{message}: {}", chain(error.source().unwrap()))
            );
        }
    }
}
