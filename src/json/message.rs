//! serde_json's error messages in the words of the files people edit.

/// What a serde_json error says, without its position (callers name the
/// line and column their own way) and without serde's vocabulary:
/// `invalid type: string "x", expected struct Rules` becomes
/// `expected an object, found a string "x"`.
pub(crate) fn plain_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let text = match text.rfind(" at line ") {
        Some(at) if text[at..].contains(" column ") => &text[..at],
        _ => text.as_str(),
    };
    if text.starts_with("recursion limit exceeded") {
        return format!("nested more than {} levels deep", super::MAX_DEPTH);
    }
    if let Some(rest) = text
        .strip_prefix("invalid type: ")
        .or_else(|| text.strip_prefix("invalid value: "))
        && let Some((found, expected)) = rest.split_once(", expected ")
    {
        let found = match found {
            "map" => "an object",
            "sequence" => "an array",
            other => other,
        };
        return format!("expected {}, found {found}", plain_expected(expected));
    }
    text.replace("EOF while parsing", "the text ends inside")
        .replace("a sequence", "an array")
        .replace("a map", "an object")
}

/// serde's name for an expected shape, as a reader of JSON says it.
fn plain_expected(expected: &str) -> String {
    if expected.starts_with("struct ") || expected == "a map" || expected.starts_with("map") {
        return "an object".into();
    }
    if expected == "a sequence" || expected.starts_with("a sequence") {
        return "an array".into();
    }
    if expected.starts_with("u8")
        || expected.starts_with("u16")
        || expected.starts_with("u32")
        || expected.starts_with("u64")
        || expected.starts_with("usize")
    {
        return "a non-negative integer".into();
    }
    if expected.starts_with("i64") || expected.starts_with("i32") {
        return "an integer".into();
    }
    if expected == "a boolean" || expected == "a string" {
        return expected.into();
    }
    expected.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Shape {
        n: u32,
        list: Vec<u8>,
    }

    #[test]
    fn speaks_json_not_serde() {
        let e = serde_json::from_str::<Shape>(r#""x""#).unwrap_err();
        assert_eq!(plain_error(&e), r#"expected an object, found string "x""#);
        let e = serde_json::from_str::<Shape>(r#"{"n": -1, "list": []}"#).unwrap_err();
        assert_eq!(
            plain_error(&e),
            "expected a non-negative integer, found integer `-1`"
        );
        let e = serde_json::from_str::<Shape>(r#"{"n": 1, "list": {}}"#).unwrap_err();
        assert_eq!(plain_error(&e), "expected an array, found an object");
        let e = serde_json::from_str::<Shape>(r#"{"n": 1"#).unwrap_err();
        assert_eq!(plain_error(&e), "the text ends inside an object");
    }
}
