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
    use super::chain;

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
}
