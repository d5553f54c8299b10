//! Hints for drift that is only volatile values: a timestamp, a UUID, a
//! long hex id, an epoch number that changes on every run. For each such
//! difference the hint is the exact `normalize` rule (the cassette's
//! `rules.normalize`) that absorbs it, checked by applying it to both
//! sides: a whole-value rule when the value is nothing but the volatile
//! part, a regex rule for a volatile part inside a longer string.

use std::sync::LazyLock;

use serde::Serialize;
use serde_json::Value;

use crate::cassette::NormalizeRule;
use crate::json::Selector;
use crate::redact::RegexText;

/// One suggested rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hint {
    /// What the values look like: `timestamp`, `UUID`, `hex id`, `time of
    /// day`, `epoch time`.
    pub kind: &'static str,
    /// The rule to add to the cassette's `rules.normalize`.
    pub rule: NormalizeRule,
}

/// A kind of volatile value, and how to find it inside text.
struct Kind {
    name: &'static str,
    pattern: &'static str,
    replacement: &'static str,
}

/// Tried in order: the first that explains a difference wins.
const KINDS: [Kind; 4] = [
    Kind {
        name: "timestamp",
        pattern: r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?",
        replacement: "[timestamp]",
    },
    Kind {
        name: "UUID",
        pattern: r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
        replacement: "[uuid]",
    },
    Kind {
        name: "hex id",
        pattern: r"\b(?:[0-9a-f]{16,}|[0-9A-F]{16,})\b",
        replacement: "[id]",
    },
    Kind {
        name: "time of day",
        pattern: r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?:\s?[AaPp][Mm])?",
        replacement: "[time]",
    },
];

/// Seconds since 1970 between 2001 and 2096, or milliseconds, microseconds
/// or nanoseconds in the same span.
fn is_epoch(n: u64) -> bool {
    [1, 1_000, 1_000_000, 1_000_000_000]
        .iter()
        .any(|scale| (1_000_000_000 * scale..4_000_000_000 * scale).contains(&n))
}

/// Rules that would absorb the volatile differences between a recorded
/// and a live comparison view (`{"response": …, "traffic": [...]}`, as
/// [`super::compare`] builds them). Selectors are rooted at each compared
/// message, as `normalize` rules are; array positions become `*`.
pub(super) fn suggest(recorded: &Value, live: &Value) -> Vec<Hint> {
    let mut hints = Vec::new();
    let mut roots = vec![(&recorded["response"], &live["response"])];
    if let (Some(old), Some(new)) = (recorded["traffic"].as_array(), live["traffic"].as_array()) {
        roots.extend(old.iter().zip(new));
    }
    for (old, new) in roots {
        walk(old, new, old, new, &mut Vec::new(), &mut hints);
    }
    hints
}

/// Looks for differing leaves under `old` and `new` (at `path` in the
/// messages `old_root` and `new_root`).
fn walk<'a>(
    old_root: &Value,
    new_root: &Value,
    old: &'a Value,
    new: &'a Value,
    path: &mut Vec<String>,
    hints: &mut Vec<Hint>,
) {
    if old == new {
        return;
    }
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                if let Some(other) = b.get(key) {
                    path.push(crate::json::pointer_segment(key).into_owned());
                    walk(old_root, new_root, value, other, path, hints);
                    path.pop();
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (value, other) in a.iter().zip(b) {
                path.push("*".to_owned());
                walk(old_root, new_root, value, other, path, hints);
                path.pop();
            }
        }
        (Value::String(a), Value::String(b)) => {
            if let Some(hint) = text_hint(a, b, path)
                && absorbs(&hint.rule, old_root, new_root)
                && !hints.contains(&hint)
            {
                hints.push(hint);
            }
        }
        (Value::Number(a), Value::Number(b)) => {
            let epoch = |n: &serde_json::Number| n.as_u64().is_some_and(is_epoch);
            if epoch(a)
                && epoch(b)
                && let Some(rule) = rule(path, None, "[epoch]")
                && absorbs(&rule, old_root, new_root)
            {
                let hint = Hint {
                    kind: "epoch time",
                    rule,
                };
                if !hints.contains(&hint) {
                    hints.push(hint);
                }
            }
        }
        _ => {}
    }
}

/// A rule for two strings that differ only by volatile parts of one kind.
fn text_hint(old: &str, new: &str, path: &[String]) -> Option<Hint> {
    static COMPILED: LazyLock<Vec<regex::Regex>> = LazyLock::new(|| {
        KINDS
            .iter()
            .map(|kind| regex::Regex::new(kind.pattern).expect("built-in patterns compile"))
            .collect()
    });
    for (kind, regex) in KINDS.iter().zip(COMPILED.iter()) {
        let replaced = |text: &str| regex.replace_all(text, kind.replacement).into_owned();
        if !regex.is_match(old) || !regex.is_match(new) || replaced(old) != replaced(new) {
            continue;
        }
        let whole = |text: &str| regex.find(text).is_some_and(|m| m.as_str() == text);
        let rule = if whole(old) && whole(new) {
            rule(path, None, kind.replacement)?
        } else {
            rule(path, Some(kind.pattern), kind.replacement)?
        };
        return Some(Hint {
            kind: kind.name,
            rule,
        });
    }
    None
}

fn rule(path: &[String], pattern: Option<&str>, replacement: &str) -> Option<NormalizeRule> {
    let selector = Selector::parse(&format!("/{}", path.join("/"))).ok()?;
    let regex = match pattern {
        Some(pattern) => Some(pattern.parse::<RegexText>().ok()?),
        None => None,
    };
    Some(NormalizeRule {
        selector,
        regex,
        replacement: replacement.to_owned(),
    })
}

/// Whether `rule` makes the two messages agree at what it selects.
fn absorbs(rule: &NormalizeRule, old: &Value, new: &Value) -> bool {
    let (mut old, mut new) = (old.clone(), new.clone());
    rule.apply(&mut old);
    rule.apply(&mut new);
    let (a, b) = (rule.selector.select(&old), rule.selector.select(&new));
    !a.is_empty() && a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.1 == y.1)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn view(response: Value, traffic: Vec<Value>) -> Value {
        json!({"response": response, "traffic": traffic})
    }

    fn rules(hints: &[Hint]) -> Vec<String> {
        hints.iter().map(|h| h.rule.to_string()).collect()
    }

    #[test]
    fn whole_timestamps_uuids_and_epochs_get_whole_value_rules() {
        let old = view(
            json!({"result": {"at": "2026-11-30T10:00:00Z", "id": "0b6a3c57-8d1e-4f2a-9c3b-1e2d3f4a5b6c",
                              "items": [{"ts": 1764500000}], "same": 1}}),
            vec![],
        );
        let new = view(
            json!({"result": {"at": "2026-12-01T07:41:12.345+01:00", "id": "7f00aa11-0000-4bbb-8ccc-123456789abc",
                              "items": [{"ts": 1764570000}], "same": 1}}),
            vec![],
        );
        let hints = suggest(&old, &new);
        assert_eq!(
            rules(&hints),
            [
                "/result/at → [timestamp]",
                "/result/id → [uuid]",
                "/result/items/*/ts → [epoch]"
            ]
        );
        assert_eq!(hints[0].kind, "timestamp");
    }

    #[test]
    fn a_volatile_part_of_a_text_gets_a_regex_rule_that_absorbs_it() {
        let text = |at: &str| json!({"content": [{"type": "text", "text": format!("created {at} by ada")}]});
        let old = view(json!({"result": text("2026-11-30 10:00:00")}), vec![]);
        let new = view(json!({"result": text("2026-12-01 07:00:59")}), vec![]);
        let hints = suggest(&old, &new);
        assert_eq!(hints.len(), 1);
        let rule = &hints[0].rule;
        assert_eq!(rule.selector.as_str(), "/result/content/*/text");
        assert!(rule.regex.is_some());
        let (mut a, mut b) = (old["response"].clone(), new["response"].clone());
        rule.apply(&mut a);
        rule.apply(&mut b);
        assert_eq!(a, b, "the rule absorbs the difference");
    }

    #[test]
    fn notifications_and_hex_ids_are_hinted_at_their_own_root() {
        let log = |id: &str| json!({"method": "notifications/message", "params": {"data": format!("request {id} done")}});
        let old = view(json!(null), vec![log("9f86d081884c7d65")]);
        let new = view(json!(null), vec![log("2c26b46b68ffc68f")]);
        assert_eq!(
            rules(&suggest(&old, &new)),
            [r"/params/data =~ /\b(?:[0-9a-f]{16,}|[0-9A-F]{16,})\b/ → [id]"]
        );
    }

    #[test]
    fn real_changes_get_no_hint() {
        let old = view(
            json!({"result": {"text": "2026-11-30T10:00:00Z: 3 items", "n": 5}}),
            vec![],
        );
        let new = view(
            json!({"result": {"text": "2026-12-01T10:00:00Z: 4 items", "n": 6}}),
            vec![],
        );
        assert!(suggest(&old, &new).is_empty());
    }
}
