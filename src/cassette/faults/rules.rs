//! Reading a faults document: its shape (a list, or a seed and a list),
//! each rule's selectors and its one fault kind, the combinations that can
//! never do what they say, and what a transport cannot do.

use serde_json::{Map, Value};

use super::error::{FaultsError, kind_of, pointer, unsigned};
use super::kinds::parse_fault;
use super::{FAULT_KINDS, FAULT_SELECTORS, Fault, FaultRule, FaultSelect, Faults};

impl Faults {
    /// Reads a faults document: a list of rules, or `{"seed": N, "faults":
    /// [...]}`. Pointers in errors are rooted at the document.
    pub fn from_document(document: &Value) -> Result<Faults, FaultsError> {
        match document {
            Value::Array(rules) => Faults::from_rules(rules, 0, ""),
            Value::Object(members) => {
                for key in members.keys() {
                    if key != "seed" && key != "faults" {
                        return Err(FaultsError::at(
                            &pointer("", key),
                            format!(
                                "unknown member `{key}` of a faults file (allowed: `faults`, `seed`)"
                            ),
                        ));
                    }
                }
                let seed = match members.get("seed") {
                    Some(seed) => unsigned(seed, "/seed", "seed")?,
                    None => 0,
                };
                match members.get("faults") {
                    Some(Value::Array(rules)) => Faults::from_rules(rules, seed, "/faults"),
                    Some(other) => Err(FaultsError::at(
                        "/faults",
                        format!("`faults` must be a list of rules, not {}", kind_of(other)),
                    )),
                    None => Err(FaultsError::at(
                        "",
                        "a faults file needs `faults`, the list of rules",
                    )),
                }
            }
            other => Err(FaultsError::at(
                "",
                format!(
                    "a faults file is a list of rules or {{\"seed\", \"faults\"}}, not {}",
                    kind_of(other)
                ),
            )),
        }
    }

    /// Reads a list of rules whose pointers start at `root`.
    pub fn from_rules(rules: &[Value], seed: u64, root: &str) -> Result<Faults, FaultsError> {
        let rules = rules
            .iter()
            .enumerate()
            .map(|(i, rule)| parse_rule(rule, &format!("{root}/{i}")))
            .collect::<Result<_, _>>()?;
        Ok(Faults { seed, rules })
    }

    /// Refuses what this transport cannot do: an `http` fault over stdio.
    pub fn check_transport(&self, http: bool) -> Result<(), FaultsError> {
        if http {
            return Ok(());
        }
        match self
            .rules
            .iter()
            .position(|r| matches!(r.fault, Fault::Http(_)))
        {
            Some(i) => Err(FaultsError::at(
                &format!("/{i}/http"),
                "an `http` fault needs a replay over Streamable HTTP (`--listen`); over stdio use `disconnect` or `malformed`",
            )),
            None => Ok(()),
        }
    }
}

fn parse_rule(rule: &Value, at: &str) -> Result<FaultRule, FaultsError> {
    let Value::Object(members) = rule else {
        return Err(FaultsError::at(
            at,
            format!(
                "a fault rule is an object of selectors and one fault kind, not {}",
                kind_of(rule)
            ),
        ));
    };
    let mut kinds = Vec::new();
    for key in members.keys() {
        if FAULT_KINDS.contains(&key.as_str()) {
            kinds.push(key.as_str());
        } else if !FAULT_SELECTORS.contains(&key.as_str()) {
            return Err(FaultsError::at(
                &pointer(at, key),
                format!(
                    "unknown member `{key}` of a fault rule (fault kinds: {}; selectors: {})",
                    FAULT_KINDS.join(", "),
                    FAULT_SELECTORS.join(", ")
                ),
            ));
        }
    }
    let kind = match kinds.as_slice() {
        [kind] => *kind,
        [] => {
            return Err(FaultsError::at(
                at,
                format!(
                    "a fault rule needs one fault kind: {}",
                    FAULT_KINDS.join(", ")
                ),
            ));
        }
        [first, second, ..] => {
            return Err(FaultsError::at(
                &pointer(at, second),
                format!(
                    "a fault rule has one fault kind, this one has `{first}` and `{second}`: write two rules"
                ),
            ));
        }
    };
    let select = parse_select(members, at)?;
    let fault = parse_fault(kind, &members[kind], &pointer(at, kind))?;
    check_combination(&select, &fault, at)?;
    Ok(FaultRule { select, fault })
}

fn parse_select(members: &Map<String, Value>, at: &str) -> Result<FaultSelect, FaultsError> {
    let text = |key: &str| -> Result<Option<String>, FaultsError> {
        match members.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(FaultsError::at(
                &pointer(at, key),
                format!("`{key}` must be a string, not {}", kind_of(other)),
            )),
        }
    };
    let positive = |key: &str| -> Result<Option<u64>, FaultsError> {
        match members.get(key) {
            None => Ok(None),
            Some(value) => match value.as_u64() {
                Some(n) if n >= 1 => Ok(Some(n)),
                _ => Err(FaultsError::at(
                    &pointer(at, key),
                    format!("`{key}` must be a whole number from 1 up, not {value}"),
                )),
            },
        }
    };
    let probability = match members.get("probability") {
        None => None,
        Some(value) => match value.as_f64() {
            Some(p) if (0.0..=1.0).contains(&p) => Some(p),
            _ => {
                return Err(FaultsError::at(
                    &pointer(at, "probability"),
                    format!("`probability` must be a number from 0 to 1, not {value}"),
                ));
            }
        },
    };
    let seed = match members.get("seed") {
        None => None,
        Some(seed) => Some(unsigned(seed, &pointer(at, "seed"), "seed")?),
    };
    Ok(FaultSelect {
        method: text("method")?,
        name: text("name")?,
        uri: text("uri")?,
        when: members.get("when").cloned(),
        nth: positive("nth")?,
        times: positive("times")?,
        probability,
        seed,
        session: positive("session")?,
    })
}

/// Refuses rules that can never do what they say.
fn check_combination(select: &FaultSelect, fault: &Fault, at: &str) -> Result<(), FaultsError> {
    let kind = fault.kind();
    let here = pointer(at, kind);
    if let Fault::ToolError(_) = fault {
        if let Some(method) = select.method.as_deref().filter(|m| *m != "tools/call") {
            return Err(FaultsError::at(
                &here,
                format!(
                    "`tool_error` is a `tools/call` result; this rule selects `{method}` (use `error` for a JSON-RPC error)"
                ),
            ));
        }
        if select.uri.is_some() {
            return Err(FaultsError::at(
                &here,
                "`tool_error` is a `tools/call` result; this rule selects a resource by `uri` (use `error`)",
            ));
        }
    }
    if select.name.is_some() && select.uri.is_some() {
        return Err(FaultsError::at(
            &pointer(at, "uri"),
            "a request names a tool or prompt (`name`) or a resource (`uri`), not both",
        ));
    }
    if let (Some(method), Some(_)) = (&select.method, &select.name)
        && !matches!(method.as_str(), "tools/call" | "prompts/get")
    {
        return Err(FaultsError::at(
            &pointer(at, "name"),
            format!("`name` selects a tool or prompt; `{method}` names neither"),
        ));
    }
    if let Some(0.0) = select.probability {
        return Err(FaultsError::at(
            &pointer(at, "probability"),
            "`probability` 0 never fires: remove the rule instead",
        ));
    }
    if select.seed.is_some() && select.probability.is_none() {
        return Err(FaultsError::at(
            &pointer(at, "seed"),
            "`seed` decides a `probability`; this rule has none",
        ));
    }
    Ok(())
}
