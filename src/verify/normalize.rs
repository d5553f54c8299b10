//! Normalising volatile fields before comparing, insta-style: a selector
//! picks the values (`/result/**/timestamp`), an optional regex the part of
//! each string (`[0-9]+ ms`), and the replacement stands in for it on both
//! sides. Rules are stored in the cassette's rules (`normalize`), and every
//! replacement is counted so the report can say what was normalised.

use serde_json::Value;

use crate::cassette::NormalizeRule;

impl NormalizeRule {
    /// Normalises `message` in place; returns how many values changed.
    pub fn apply(&self, message: &mut Value) -> usize {
        let pointers: Vec<String> = self
            .selector
            .select(message)
            .into_iter()
            .map(|(pointer, _)| pointer)
            .collect();
        let mut changed = 0;
        for pointer in pointers {
            let Some(value) = message.pointer_mut(&pointer) else {
                continue;
            };
            let replaced = match (&self.regex, &*value) {
                (Some(regex), Value::String(text)) => {
                    let out = regex.regex().replace_all(text, self.replacement.as_str());
                    (out != *text).then(|| Value::String(out.into_owned()))
                }
                (Some(_), _) => None,
                (None, current) => {
                    let replacement = Value::String(self.replacement.clone());
                    (*current != replacement).then_some(replacement)
                }
            };
            if let Some(new) = replaced {
                *value = new;
                changed += 1;
            }
        }
        changed
    }
}

/// Applies every rule to `message`; adds each rule's count to `counts`.
pub(super) fn apply_all(rules: &[NormalizeRule], message: &mut Value, counts: &mut [usize]) {
    for (rule, count) in rules.iter().zip(counts.iter_mut()) {
        *count += rule.apply(message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(text: &str) -> NormalizeRule {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn whole_values_and_regex_matches_are_replaced_and_counted() {
        let whole = rule(r#"{"selector": "/result/**/timestamp", "replacement": "[timestamp]"}"#);
        let mut message =
            json!({"result": {"timestamp": "2026-01-01", "items": [{"timestamp": 5}]}});
        assert_eq!(whole.apply(&mut message), 2);
        assert_eq!(message["result"]["items"][0]["timestamp"], "[timestamp]");
        // Already normalised: nothing changes the second time.
        assert_eq!(whole.apply(&mut message), 0);

        let part = rule(
            r#"{"selector": "/result/content/*/text", "regex": "[0-9]+ ms", "replacement": "[duration]"}"#,
        );
        let mut message =
            json!({"result": {"content": [{"type": "text", "text": "took 12 ms, then 7 ms"}]}});
        assert_eq!(part.apply(&mut message), 1);
        assert_eq!(
            message["result"]["content"][0]["text"],
            "took [duration], then [duration]"
        );
        assert_eq!(
            part.to_string(),
            "/result/content/*/text =~ /[0-9]+ ms/ → [duration]"
        );
    }

    #[test]
    fn unknown_fields_and_bad_regexes_are_refused() {
        assert!(
            serde_json::from_str::<NormalizeRule>(
                r#"{"selector": "/a", "replacement": "x", "extra": 1}"#
            )
            .is_err()
        );
        assert!(
            serde_json::from_str::<NormalizeRule>(
                r#"{"selector": "/a", "regex": "(", "replacement": "x"}"#
            )
            .is_err()
        );
    }
}
