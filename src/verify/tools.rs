//! Classifying `tools/list` changes, tool by tool, so a drift report can
//! say what happened ("tool `echo` removed") and whether a client that
//! worked against the recording may now fail, instead of leaving readers to
//! work that out from a JSON diff.
//!
//! Schemas are compared structurally, keyword by keyword, recursing into
//! object properties, `additionalProperties` and array `items`. Each
//! difference moves the set of values a schema accepts one way (`Shift`);
//! whether that breaks anything depends on who produces the values: clients
//! produce arguments (`inputSchema`, breaking when it narrows), servers
//! produce results (`outputSchema`, breaking when it widens).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value};

/// One tool-level change between two `tools/list` results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum ToolChange {
    /// The live server lists a tool the recording does not have.
    Added {
        /// The tool's name.
        tool: String,
    },
    /// The recording lists a tool the live server no longer has.
    Removed {
        /// The tool's name.
        tool: String,
    },
    /// The tool's `description` changed.
    DescriptionChanged {
        /// The tool's name.
        tool: String,
    },
    /// The tool's `title` changed.
    TitleChanged {
        /// The tool's name.
        tool: String,
    },
    /// The tool's `annotations` changed.
    AnnotationsChanged {
        /// The tool's name.
        tool: String,
    },
    /// `inputSchema` changed; `breaking` when a client that worked before
    /// may now fail.
    InputSchemaChanged {
        /// The tool's name.
        tool: String,
        /// Whether arguments valid before may now be rejected.
        breaking: bool,
        /// What changed: the breaking changes when `breaking`, otherwise
        /// the compatible ones worth mentioning.
        reasons: Vec<String>,
    },
    /// `outputSchema` changed (breaking when the server may now return
    /// what a client did not expect: removed/narrowed-to-optional
    /// guaranteed fields, changed types).
    OutputSchemaChanged {
        /// The tool's name.
        tool: String,
        /// Whether results may no longer match what clients expect.
        breaking: bool,
        /// What changed: the breaking changes when `breaking`, otherwise
        /// the compatible ones worth mentioning.
        reasons: Vec<String>,
    },
}

impl ToolChange {
    /// The tool the change is about.
    pub fn tool(&self) -> &str {
        match self {
            ToolChange::Added { tool }
            | ToolChange::Removed { tool }
            | ToolChange::DescriptionChanged { tool }
            | ToolChange::TitleChanged { tool }
            | ToolChange::AnnotationsChanged { tool }
            | ToolChange::InputSchemaChanged { tool, .. }
            | ToolChange::OutputSchemaChanged { tool, .. } => tool,
        }
    }

    /// Whether a client that worked against the recording may now fail: a
    /// removed tool or a breaking schema change.
    pub fn is_breaking(&self) -> bool {
        match self {
            ToolChange::Removed { .. } => true,
            ToolChange::InputSchemaChanged { breaking, .. }
            | ToolChange::OutputSchemaChanged { breaking, .. } => *breaking,
            _ => false,
        }
    }

    /// One line for people, e.g. "tool `echo`: input schema changed,
    /// breaking: new required property `loud`".
    pub fn describe(&self) -> String {
        match self {
            ToolChange::Added { tool } => format!("tool `{tool}` added"),
            ToolChange::Removed { tool } => format!("tool `{tool}` removed"),
            ToolChange::DescriptionChanged { tool } => {
                format!("tool `{tool}`: description changed")
            }
            ToolChange::TitleChanged { tool } => format!("tool `{tool}`: title changed"),
            ToolChange::AnnotationsChanged { tool } => {
                format!("tool `{tool}`: annotations changed")
            }
            ToolChange::InputSchemaChanged {
                tool,
                breaking,
                reasons,
            } => describe_schema(tool, "input", *breaking, reasons),
            ToolChange::OutputSchemaChanged {
                tool,
                breaking,
                reasons,
            } => describe_schema(tool, "output", *breaking, reasons),
        }
    }

    /// Where the change sorts: removed tools first, then added ones, then
    /// changes to tools in both (the order readers care about).
    fn rank(&self) -> u8 {
        match self {
            ToolChange::Removed { .. } => 0,
            ToolChange::Added { .. } => 1,
            _ => 2,
        }
    }
}

/// The line for a schema change: verdict, then reasons.
fn describe_schema(tool: &str, which: &str, breaking: bool, reasons: &[String]) -> String {
    let verdict = if breaking { "breaking" } else { "compatible" };
    let mut line = format!("tool `{tool}`: {which} schema changed, {verdict}");
    if !reasons.is_empty() {
        line.push_str(": ");
        line.push_str(&reasons.join("; "));
    }
    line
}

/// Compares two `tools/list` results (the `result` objects, each with a
/// `tools` array; malformed input counts as no tools, since drift should
/// be reported, not crash on). Tools are matched by name; the output is
/// sorted: removed, added, then changed, by tool name.
pub(super) fn classify(recorded: &Value, live: &Value) -> Vec<ToolChange> {
    let before = tools_by_name(recorded);
    let after = tools_by_name(live);
    let mut changes = Vec::new();
    for name in before.keys().filter(|name| !after.contains_key(*name)) {
        changes.push(ToolChange::Removed {
            tool: name.to_string(),
        });
    }
    for name in after.keys().filter(|name| !before.contains_key(*name)) {
        changes.push(ToolChange::Added {
            tool: name.to_string(),
        });
    }
    for (name, old) in &before {
        if let Some(new) = after.get(name) {
            changes.extend(tool_changes(name, old, new));
        }
    }
    // Stable: a tool's own changes keep the order `tool_changes` gives.
    changes.sort_by(|a, b| (a.rank(), a.tool()).cmp(&(b.rank(), b.tool())));
    changes
}

/// The tools of a `tools/list` result by name; entries without a name are
/// skipped, and the first of duplicated names wins.
fn tools_by_name(result: &Value) -> BTreeMap<&str, &Map<String, Value>> {
    let mut tools = BTreeMap::new();
    let entries = result.get("tools").and_then(Value::as_array);
    for tool in entries.into_iter().flatten().filter_map(Value::as_object) {
        if let Some(name) = tool.get("name").and_then(Value::as_str) {
            tools.entry(name).or_insert(tool);
        }
    }
    tools
}

/// What changed in a tool present on both sides.
fn tool_changes(name: &str, old: &Map<String, Value>, new: &Map<String, Value>) -> Vec<ToolChange> {
    let tool = || name.to_string();
    let differs = |key: &str| old.get(key) != new.get(key);
    let mut changes = Vec::new();
    if differs("description") {
        changes.push(ToolChange::DescriptionChanged { tool: tool() });
    }
    if differs("title") {
        changes.push(ToolChange::TitleChanged { tool: tool() });
    }
    if differs("annotations") {
        changes.push(ToolChange::AnnotationsChanged { tool: tool() });
    }
    if differs("inputSchema") {
        let (breaking, reasons) = compare_schemas(old, new, "inputSchema", Side::Input);
        changes.push(ToolChange::InputSchemaChanged {
            tool: tool(),
            breaking,
            reasons,
        });
    }
    if differs("outputSchema") {
        let (breaking, reasons) = compare_schemas(old, new, "outputSchema", Side::Output);
        changes.push(ToolChange::OutputSchemaChanged {
            tool: tool(),
            breaking,
            reasons,
        });
    }
    changes
}

/// Who produces the values a schema describes, which decides which way of
/// changing it breaks the other side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// Clients send them (`inputSchema`): narrowing breaks.
    Input,
    /// The server returns them (`outputSchema`): widening breaks.
    Output,
}

/// Which way a difference moves the set of values a schema accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shift {
    /// Fewer values: something accepted before is rejected now.
    Narrower,
    /// More values: something rejected before is accepted now.
    Wider,
    /// Neither a subset nor a superset: breaks either side.
    Changed,
    /// Worth mentioning, breaks neither side.
    Neutral,
}

impl Shift {
    /// Whether this shift breaks the consumer of values on `side`.
    fn breaks(self, side: Side) -> bool {
        matches!(
            (self, side),
            (Shift::Changed, _) | (Shift::Narrower, Side::Input) | (Shift::Wider, Side::Output)
        )
    }
}

/// One difference found between two schemas.
#[derive(Debug)]
struct Finding {
    shift: Shift,
    reason: String,
}

/// One schema comparison under way. Its methods take the location being
/// compared as a property path (`filter.limit`, `rows[].id`, `tags[]`;
/// empty at the top), which is how reasons name it.
struct Walk {
    findings: Vec<Finding>,
}

/// Compares the `key` schemas of two tools. Returns whether the change
/// breaks `side`, and the reasons: the breaking ones when it does, the
/// others otherwise. A missing schema counts as `{}` (anything).
fn compare_schemas(
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    key: &str,
    side: Side,
) -> (bool, Vec<String>) {
    let mut walk = Walk {
        findings: Vec::new(),
    };
    walk.schema(schema(old.get(key)), schema(new.get(key)), "");
    let (breaking, compatible): (Vec<Finding>, Vec<Finding>) = walk
        .findings
        .into_iter()
        .partition(|f| f.shift.breaks(side));
    let is_breaking = !breaking.is_empty();
    let chosen = if is_breaking { breaking } else { compatible };
    (is_breaking, chosen.into_iter().map(|f| f.reason).collect())
}

/// A schema as an object; `true`, missing and malformed schemas accept
/// anything, which is what an empty object says.
fn schema(value: Option<&Value>) -> &Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    value
        .and_then(Value::as_object)
        .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

/// How a location is named in reasons.
fn subject(path: &str) -> String {
    if path.is_empty() {
        "the top level".to_string()
    } else {
        format!("`{path}`")
    }
}

/// The path of a property below `path`.
fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// Lower bounds (raising them narrows) and upper bounds (lowering them
/// narrows).
const LOWER_BOUNDS: [&str; 5] = [
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
];
const UPPER_BOUNDS: [&str; 5] = [
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
];

/// Keywords whose value is a single constraint: adding one narrows,
/// changing one may reject what was valid, removing one widens.
const CONSTRAINTS: [&str; 4] = ["const", "pattern", "format", "multipleOf"];

/// Keywords not analysed further; a change to them counts as `Changed` so
/// that nothing that may break is reported as compatible.
const OPAQUE: [&str; 8] = [
    "anyOf", "oneOf", "allOf", "not", "$ref", "if", "then", "else",
];

impl Walk {
    /// Records a finding.
    fn note(&mut self, shift: Shift, reason: String) {
        self.findings.push(Finding { shift, reason });
    }

    /// Compares two schemas at `path`, keyword by keyword. Annotations
    /// (`description`, `title`, `default`, `examples`) are not looked at:
    /// they change no value's validity.
    fn schema(&mut self, old: &Map<String, Value>, new: &Map<String, Value>, path: &str) {
        self.types(old, new, path);
        self.enums(old, new, path);
        for key in CONSTRAINTS {
            self.constraint(key, old.get(key), new.get(key), path);
        }
        for key in LOWER_BOUNDS {
            self.bound(key, true, old.get(key), new.get(key), path);
        }
        for key in UPPER_BOUNDS {
            self.bound(key, false, old.get(key), new.get(key), path);
        }
        for key in OPAQUE.into_iter().filter(|k| old.get(*k) != new.get(*k)) {
            let reason = format!("`{key}` of {} changed", subject(path));
            self.note(Shift::Changed, reason);
        }
        self.additional(old, new, path);
        self.properties(old, new, path);
        if old.contains_key("items") || new.contains_key("items") {
            let items = format!("{path}[]");
            self.schema(schema(old.get("items")), schema(new.get("items")), &items);
        }
    }

    /// `type`: compared as sets, `integer` being part of `number`.
    fn types(&mut self, old: &Map<String, Value>, new: &Map<String, Value>, path: &str) {
        let (before, after) = (types(old), types(new));
        let (shift, how) = match (covers(&before, &after), covers(&after, &before)) {
            (true, true) => return,
            (true, false) => (Shift::Narrower, "narrowed"),
            (false, true) => (Shift::Wider, "widened"),
            (false, false) => (Shift::Changed, "changed"),
        };
        let (from, to) = (show_types(&before), show_types(&after));
        let reason = format!("type of {} {how} from {from} to {to}", subject(path));
        self.note(shift, reason);
    }

    /// `enum`: losing values narrows, gaining values widens; no `enum` is
    /// any value.
    fn enums(&mut self, old: &Map<String, Value>, new: &Map<String, Value>, path: &str) {
        let at = subject(path);
        match (enum_values(old), enum_values(new)) {
            (None, None) => {}
            (None, Some(b)) => self.note(
                Shift::Narrower,
                format!("{at} now limited to {}", show_values(b.iter())),
            ),
            (Some(_), None) => {
                self.note(Shift::Wider, format!("{at} no longer limited to an enum"))
            }
            (Some(a), Some(b)) => {
                let lost: Vec<_> = a.iter().filter(|v| !b.contains(v)).collect();
                let gained: Vec<_> = b.iter().filter(|v| !a.contains(v)).collect();
                if !lost.is_empty() {
                    let lost = show_values(lost.into_iter());
                    let shift = if gained.is_empty() {
                        Shift::Narrower
                    } else {
                        Shift::Changed
                    };
                    self.note(shift, format!("enum of {at} lost {lost}"));
                }
                if !gained.is_empty() {
                    let gained = show_values(gained.into_iter());
                    self.note(Shift::Wider, format!("enum of {at} gained {gained}"));
                }
            }
        }
    }

    /// A single-valued constraint such as `pattern` or `const`.
    fn constraint(&mut self, key: &str, old: Option<&Value>, new: Option<&Value>, path: &str) {
        let at = subject(path);
        match (old, new) {
            (None, Some(b)) => self.note(Shift::Narrower, format!("{key} of {at} added ({b})")),
            (Some(a), None) => self.note(Shift::Wider, format!("{key} of {at} removed (was {a})")),
            (Some(a), Some(b)) if a != b => {
                self.note(Shift::Changed, format!("{key} of {at} changed ({a} → {b})"));
            }
            _ => {}
        }
    }

    /// A numeric bound; `lower` when raising it narrows.
    fn bound(
        &mut self,
        key: &str,
        lower: bool,
        old: Option<&Value>,
        new: Option<&Value>,
        path: &str,
    ) {
        let number = |v: Option<&Value>| v.and_then(Value::as_f64);
        let shift = match (number(old), number(new)) {
            (None, None) => return,
            (None, Some(_)) => Shift::Narrower,
            (Some(_), None) => Shift::Wider,
            (Some(a), Some(b)) if a == b => return,
            (Some(a), Some(b)) if (b > a) == lower => Shift::Narrower,
            _ => Shift::Wider,
        };
        let how = if shift == Shift::Narrower {
            "tightened"
        } else {
            "loosened"
        };
        let show = |v: Option<&Value>| v.map_or("none".to_string(), Value::to_string);
        let (from, to) = (show(old), show(new));
        let reason = format!("{key} of {} {how} ({from} → {to})", subject(path));
        self.note(shift, reason);
    }

    /// `additionalProperties`: `false` forbids what was allowed; schemas on
    /// both sides are compared like properties.
    fn additional(&mut self, old: &Map<String, Value>, new: &Map<String, Value>, path: &str) {
        let (a, b) = (
            old.get("additionalProperties"),
            new.get("additionalProperties"),
        );
        let allowed = |v: Option<&Value>| v != Some(&Value::Bool(false));
        let at = subject(path);
        match (allowed(a), allowed(b)) {
            (true, false) => self.note(
                Shift::Narrower,
                format!("{at} no longer allows additional properties"),
            ),
            (false, true) => {
                self.note(
                    Shift::Wider,
                    format!("{at} now allows additional properties"),
                );
            }
            _ => {
                if let (Some(Value::Object(a)), Some(Value::Object(b))) = (a, b) {
                    self.schema(a, b, &child(path, "*"));
                }
            }
        }
    }

    /// `properties` and `required`, name by name, recursing into the
    /// properties on both sides.
    fn properties(&mut self, old: &Map<String, Value>, new: &Map<String, Value>, path: &str) {
        let (old_props, new_props) = (schema(old.get("properties")), schema(new.get("properties")));
        let (old_req, new_req) = (required(old), required(new));
        let names: BTreeSet<&str> = (old_props.keys().chain(new_props.keys()))
            .map(String::as_str)
            .chain(old_req.iter().chain(new_req.iter()).copied())
            .collect();
        for name in names {
            let at = child(path, name);
            let shown = subject(&at);
            let had = old_props.contains_key(name) || old_req.contains(name);
            let has = new_props.contains_key(name) || new_req.contains(name);
            let (was_req, is_req) = (old_req.contains(name), new_req.contains(name));
            match (had, has) {
                (false, true) if is_req => {
                    self.note(Shift::Narrower, format!("new required property {shown}"));
                }
                (false, true) => {
                    self.note(Shift::Neutral, format!("new optional property {shown}"))
                }
                // Clients may send it (input); a required one was a
                // guarantee clients may rely on (output).
                (true, false) if was_req => {
                    self.note(Shift::Changed, format!("required property {shown} removed"));
                }
                (true, false) => self.note(Shift::Narrower, format!("property {shown} removed")),
                _ => {
                    if is_req && !was_req {
                        self.note(Shift::Narrower, format!("property {shown} now required"));
                    }
                    if was_req && !is_req {
                        self.note(Shift::Wider, format!("property {shown} no longer required"));
                    }
                    self.schema(
                        schema(old_props.get(name)),
                        schema(new_props.get(name)),
                        &at,
                    );
                }
            }
        }
    }
}

/// The `type` of a schema as a list; `None` is any type.
fn types(schema: &Map<String, Value>) -> Option<Vec<&str>> {
    match schema.get("type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(ts) => Some(ts.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// Whether every value of type set `inner` is also of type set `outer`.
fn covers(outer: &Option<Vec<&str>>, inner: &Option<Vec<&str>>) -> bool {
    let (Some(outer), Some(inner)) = (outer, inner) else {
        return outer.is_none();
    };
    let accepts = |t: &str| outer.contains(&t) || (t == "integer" && outer.contains(&"number"));
    inner.iter().all(|t| accepts(t))
}

/// A type set for people: "string or null", "any".
fn show_types(types: &Option<Vec<&str>>) -> String {
    types
        .as_ref()
        .map_or("any".to_string(), |ts| ts.join(" or "))
}

/// The `enum` values of a schema, if it has an array of them.
fn enum_values(schema: &Map<String, Value>) -> Option<&Vec<Value>> {
    schema.get("enum").and_then(Value::as_array)
}

/// Values for people, as compact JSON: `"fast", "slow"`.
fn show_values<'a>(values: impl Iterator<Item = &'a Value>) -> String {
    values.map(Value::to_string).collect::<Vec<_>>().join(", ")
}

/// The `required` names of a schema.
fn required(schema: &Map<String, Value>) -> BTreeSet<&str> {
    let names = schema.get("required").and_then(Value::as_array);
    names
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A `tools/list` result with one tool `t` built from `fields`.
    fn one(fields: Value) -> Value {
        let mut tool = json!({"name": "t", "inputSchema": {"type": "object"}});
        for (k, v) in fields.as_object().unwrap() {
            tool[k] = v.clone();
        }
        json!({"tools": [tool]})
    }

    /// The single change between two versions of tool `t`.
    fn change(old: Value, new: Value) -> ToolChange {
        let changes = classify(&one(old), &one(new));
        assert_eq!(changes.len(), 1, "{changes:?}");
        changes.into_iter().next().unwrap()
    }

    /// The input-schema verdict for two schemas.
    fn input(old: Value, new: Value) -> (bool, Vec<String>) {
        match change(json!({"inputSchema": old}), json!({"inputSchema": new})) {
            ToolChange::InputSchemaChanged {
                breaking, reasons, ..
            } => (breaking, reasons),
            other => panic!("{other:?}"),
        }
    }

    /// The output-schema verdict for two schemas.
    fn output(old: Value, new: Value) -> (bool, Vec<String>) {
        match change(json!({"outputSchema": old}), json!({"outputSchema": new})) {
            ToolChange::OutputSchemaChanged {
                breaking, reasons, ..
            } => (breaking, reasons),
            other => panic!("{other:?}"),
        }
    }

    /// An object schema with `properties` and `required`.
    fn object(properties: Value, required: &[&str]) -> Value {
        json!({"type": "object", "properties": properties, "required": required})
    }

    fn yes(reason: &str) -> (bool, Vec<String>) {
        (true, vec![reason.to_string()])
    }

    fn no(reason: &str) -> (bool, Vec<String>) {
        (false, vec![reason.to_string()])
    }

    #[test]
    fn added_removed_and_sorted() {
        let recorded = json!({"tools": [
            {"name": "b", "description": "old"},
            {"name": "gone"},
            {"name": "a", "title": "A"},
        ]});
        let live = json!({"tools": [
            {"name": "a", "title": "A2"},
            {"name": "new"},
            {"name": "b", "description": "new"},
            {"name": "fresh"},
        ]});
        let changes = classify(&recorded, &live);
        let t = |s: &str| s.to_string();
        assert_eq!(
            changes,
            vec![
                ToolChange::Removed { tool: t("gone") },
                ToolChange::Added { tool: t("fresh") },
                ToolChange::Added { tool: t("new") },
                ToolChange::TitleChanged { tool: t("a") },
                ToolChange::DescriptionChanged { tool: t("b") },
            ]
        );
        assert!(changes[0].is_breaking());
        assert!(!changes[1].is_breaking());
        assert_eq!(changes[0].describe(), "tool `gone` removed");
        assert_eq!(changes[1].describe(), "tool `fresh` added");
        assert_eq!(changes[4].describe(), "tool `b`: description changed");
    }

    #[test]
    fn same_lists_have_no_changes() {
        let list = one(json!({"description": "d", "outputSchema": {"type": "object"}}));
        assert!(classify(&list, &list).is_empty());
    }

    #[test]
    fn description_title_annotations() {
        let d = change(json!({"description": "a"}), json!({"description": "b"}));
        assert_eq!(d, ToolChange::DescriptionChanged { tool: "t".into() });
        let t = change(json!({}), json!({"title": "T"}));
        assert_eq!(t.describe(), "tool `t`: title changed");
        let a = change(
            json!({"annotations": {"readOnlyHint": true}}),
            json!({"annotations": {"readOnlyHint": false}}),
        );
        assert_eq!(a, ToolChange::AnnotationsChanged { tool: "t".into() });
        assert!(!a.is_breaking());
    }

    #[test]
    fn several_changes_to_one_tool_keep_their_order() {
        let changes = classify(
            &one(json!({"description": "a", "annotations": {}})),
            &one(json!({"description": "b", "annotations": {"x": 1}, "inputSchema": {}})),
        );
        let kinds: Vec<_> = changes.iter().map(ToolChange::describe).collect();
        assert_eq!(
            kinds,
            [
                "tool `t`: description changed",
                "tool `t`: annotations changed",
                "tool `t`: input schema changed, compatible: type of the top level widened from object to any",
            ]
        );
    }

    #[test]
    fn malformed_inputs_count_as_no_tools() {
        let list = json!({"tools": [{"name": "a"}]});
        for bad in [
            json!(null),
            json!("tools"),
            json!({}),
            json!({"tools": {"a": 1}}),
            json!({"tools": [1, {"no": "name"}, {"name": 7}]}),
        ] {
            assert_eq!(
                classify(&bad, &list),
                [ToolChange::Added { tool: "a".into() }]
            );
            assert_eq!(
                classify(&list, &bad),
                [ToolChange::Removed { tool: "a".into() }]
            );
            assert!(classify(&bad, &bad).is_empty());
        }
    }

    #[test]
    fn malformed_schemas_count_as_anything() {
        assert_eq!(
            input(json!("nonsense"), json!({"type": "string"})),
            yes("type of the top level narrowed from any to string")
        );
        assert_eq!(
            input(json!({"properties": 3, "required": "x"}), json!({})),
            (false, vec![])
        );
    }

    #[test]
    fn serializes_with_a_change_tag() {
        let c = ToolChange::InputSchemaChanged {
            tool: "t".into(),
            breaking: true,
            reasons: vec!["r".into()],
        };
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            json!({"change": "input_schema_changed", "tool": "t", "breaking": true, "reasons": ["r"]})
        );
    }

    #[test]
    fn describe_schema_changes() {
        let c = change(
            json!({"inputSchema": object(json!({}), &[])}),
            json!({"inputSchema": object(json!({"loud": {"type": "boolean"}}), &["loud"])}),
        );
        assert_eq!(
            c.describe(),
            "tool `t`: input schema changed, breaking: new required property `loud`"
        );
        assert!(c.is_breaking());
        let c = change(
            json!({"outputSchema": {"type": "object", "description": "a"}}),
            json!({"outputSchema": {"type": "object", "description": "b"}}),
        );
        assert_eq!(c.describe(), "tool `t`: output schema changed, compatible");
        assert!(!c.is_breaking());
    }

    // Input schemas: what clients send must stay valid.

    #[test]
    fn input_new_required_property_breaks() {
        let old = object(json!({"a": {"type": "string"}}), &[]);
        let new = object(json!({"a": {"type": "string"}, "b": {}}), &["b"]);
        assert_eq!(input(old, new), yes("new required property `b`"));
    }

    #[test]
    fn input_new_optional_property_is_compatible() {
        let old = object(json!({}), &[]);
        let new = object(json!({"b": {"type": "string"}}), &[]);
        assert_eq!(input(old, new), no("new optional property `b`"));
    }

    #[test]
    fn input_existing_property_made_required_breaks() {
        let props = json!({"a": {"type": "string"}});
        let old = object(props.clone(), &[]);
        let new = object(props, &["a"]);
        assert_eq!(input(old, new), yes("property `a` now required"));
    }

    #[test]
    fn input_required_made_optional_is_compatible() {
        let props = json!({"a": {"type": "string"}});
        let old = object(props.clone(), &["a"]);
        let new = object(props, &[]);
        assert_eq!(input(old, new), no("property `a` no longer required"));
    }

    #[test]
    fn input_removed_property_breaks() {
        let old = object(json!({"count": {"type": "number"}}), &[]);
        let new = object(json!({}), &[]);
        assert_eq!(input(old, new), yes("property `count` removed"));
        let old = object(json!({"count": {"type": "number"}}), &["count"]);
        let new = object(json!({}), &[]);
        assert_eq!(input(old, new), yes("required property `count` removed"));
    }

    #[test]
    fn input_type_narrowed_breaks_widened_does_not() {
        let s = |t: Value| object(json!({"count": {"type": t}}), &[]);
        assert_eq!(
            input(s(json!("number")), s(json!("integer"))),
            yes("type of `count` narrowed from number to integer")
        );
        assert_eq!(
            input(s(json!(["string", "null"])), s(json!("string"))),
            yes("type of `count` narrowed from string or null to string")
        );
        assert_eq!(
            input(s(json!("string")), s(json!("object"))),
            yes("type of `count` changed from string to object")
        );
        assert_eq!(
            input(s(json!("integer")), s(json!("number"))),
            no("type of `count` widened from integer to number")
        );
        assert_eq!(
            input(s(json!("string")), s(json!(["null", "string"]))),
            no("type of `count` widened from string to null or string")
        );
        // The same set, spelled differently, is no change.
        assert_eq!(
            input(s(json!(["integer", "number"])), s(json!("number"))),
            (false, vec![])
        );
    }

    #[test]
    fn input_enum_lost_values_breaks_gained_does_not() {
        let s = |e: Value| json!({"type": "string", "enum": e});
        assert_eq!(
            input(s(json!(["a", "b"])), s(json!(["a"]))),
            yes(r#"enum of the top level lost "b""#)
        );
        assert_eq!(
            input(s(json!(["a"])), s(json!(["a", "b"]))),
            no(r#"enum of the top level gained "b""#)
        );
        assert_eq!(
            input(json!({"type": "string"}), s(json!(["a"]))),
            yes(r#"the top level now limited to "a""#)
        );
        assert_eq!(
            input(s(json!(["a"])), json!({"type": "string"})),
            no("the top level no longer limited to an enum")
        );
        let (breaking, reasons) = input(s(json!(["a"])), s(json!(["b"])));
        assert!(breaking);
        assert_eq!(reasons, [r#"enum of the top level lost "a""#]);
    }

    #[test]
    fn input_const_added_or_changed_breaks() {
        let s = |c: Option<Value>| match c {
            Some(c) => json!({"properties": {"mode": {"const": c}}}),
            None => json!({"properties": {"mode": {}}}),
        };
        assert_eq!(
            input(s(None), s(Some(json!("x")))),
            yes(r#"const of `mode` added ("x")"#)
        );
        assert_eq!(
            input(s(Some(json!("x"))), s(Some(json!("y")))),
            yes(r#"const of `mode` changed ("x" → "y")"#)
        );
        assert_eq!(
            input(s(Some(json!("x"))), s(None)),
            no(r#"const of `mode` removed (was "x")"#)
        );
    }

    #[test]
    fn input_additional_properties_forbidden_breaks() {
        let open = json!({"type": "object"});
        let closed = json!({"type": "object", "additionalProperties": false});
        assert_eq!(
            input(open.clone(), closed.clone()),
            yes("the top level no longer allows additional properties")
        );
        assert_eq!(
            input(closed, open),
            no("the top level now allows additional properties")
        );
        assert_eq!(
            input(
                json!({"additionalProperties": {"type": "number"}}),
                json!({"additionalProperties": {"type": "integer"}})
            ),
            yes("type of `*` narrowed from number to integer")
        );
    }

    #[test]
    fn input_tighter_bounds_break_looser_do_not() {
        let n = |k: &str, v: Value| json!({"properties": {"n": {k: v}}});
        assert_eq!(
            input(n("minimum", json!(0)), n("minimum", json!(1))),
            yes("minimum of `n` tightened (0 → 1)")
        );
        assert_eq!(
            input(n("maximum", json!(10)), n("maximum", json!(5))),
            yes("maximum of `n` tightened (10 → 5)")
        );
        assert_eq!(
            input(n("minLength", json!(1)), n("minLength", json!(2))),
            yes("minLength of `n` tightened (1 → 2)")
        );
        assert_eq!(
            input(n("maxLength", json!(9)), n("maxLength", json!(8))),
            yes("maxLength of `n` tightened (9 → 8)")
        );
        assert_eq!(
            input(json!({"properties": {"n": {}}}), n("maxLength", json!(8))),
            yes("maxLength of `n` tightened (none → 8)")
        );
        assert_eq!(
            input(n("minimum", json!(1)), n("minimum", json!(0))),
            no("minimum of `n` loosened (1 → 0)")
        );
        assert_eq!(
            input(n("maximum", json!(5)), json!({"properties": {"n": {}}})),
            no("maximum of `n` loosened (5 → none)")
        );
        assert_eq!(
            input(n("maxLength", json!(8)), n("maxLength", json!(9.0))),
            no("maxLength of `n` loosened (8 → 9.0)")
        );
    }

    #[test]
    fn input_pattern_added_or_changed_breaks() {
        let p = |v: Value| json!({"properties": {"id": {"type": "string", "pattern": v}}});
        let none = json!({"properties": {"id": {"type": "string"}}});
        assert_eq!(
            input(none.clone(), p(json!("^a"))),
            yes(r#"pattern of `id` added ("^a")"#)
        );
        assert_eq!(
            input(p(json!("^a")), p(json!("^b"))),
            yes(r#"pattern of `id` changed ("^a" → "^b")"#)
        );
        assert_eq!(
            input(p(json!("^a")), none),
            no(r#"pattern of `id` removed (was "^a")"#)
        );
    }

    #[test]
    fn input_annotations_are_compatible() {
        let old = json!({"type": "object", "properties": {"a": {
            "type": "string", "description": "x", "title": "A", "default": "d", "examples": ["e"]
        }}});
        let new = json!({"type": "object", "properties": {"a": {
            "type": "string", "description": "y", "title": "B", "default": "f", "examples": []
        }}});
        assert_eq!(input(old, new), (false, vec![]));
    }

    #[test]
    fn input_nested_properties_and_items() {
        let old = object(
            json!({"filter": object(json!({"limit": {"type": "number"}}), &[])}),
            &[],
        );
        let new = object(
            json!({"filter": object(json!({"limit": {"type": "integer"}}), &[])}),
            &[],
        );
        assert_eq!(
            input(old, new),
            yes("type of `filter.limit` narrowed from number to integer")
        );
        let old =
            json!({"properties": {"rows": {"type": "array", "items": object(json!({}), &[])}}});
        let new = json!({"properties": {"rows": {"type": "array", "items": object(json!({"id": {}}), &["id"])}}});
        assert_eq!(input(old, new), yes("new required property `rows[].id`"));
        assert_eq!(
            input(
                json!({"type": "array"}),
                json!({"type": "array", "items": {"type": "string"}})
            ),
            yes("type of `[]` narrowed from any to string")
        );
    }

    #[test]
    fn input_breaking_reasons_hide_compatible_ones() {
        let old = object(json!({"a": {}}), &[]);
        let new = object(json!({"b": {}, "c": {}}), &["c"]);
        assert_eq!(
            input(old, new),
            (
                true,
                vec![
                    "property `a` removed".to_string(),
                    "new required property `c`".to_string()
                ]
            )
        );
    }

    #[test]
    fn unanalysed_combinators_count_as_breaking() {
        assert_eq!(
            input(
                json!({"anyOf": [{"type": "string"}]}),
                json!({"anyOf": [{"type": "number"}]})
            ),
            yes("`anyOf` of the top level changed")
        );
    }

    // Output schemas: what the server returns must still be what clients
    // expect.

    #[test]
    fn output_required_property_removed_or_made_optional_breaks() {
        let props = json!({"id": {"type": "string"}});
        assert_eq!(
            output(object(props.clone(), &["id"]), object(json!({}), &[])),
            yes("required property `id` removed")
        );
        assert_eq!(
            output(object(props.clone(), &["id"]), object(props, &[])),
            yes("property `id` no longer required")
        );
    }

    #[test]
    fn output_optional_property_removed_is_compatible() {
        let props = json!({"id": {"type": "string"}});
        assert_eq!(
            output(object(props, &[]), object(json!({}), &[])),
            no("property `id` removed")
        );
    }

    #[test]
    fn output_new_properties_are_compatible() {
        let old = object(json!({}), &[]);
        assert_eq!(
            output(old.clone(), object(json!({"x": {}}), &["x"])),
            no("new required property `x`")
        );
        assert_eq!(
            output(old, object(json!({"x": {}}), &[])),
            no("new optional property `x`")
        );
        let props = json!({"x": {}});
        assert_eq!(
            output(object(props.clone(), &[]), object(props, &["x"])),
            no("property `x` now required")
        );
    }

    #[test]
    fn output_type_widened_or_changed_breaks_narrowed_does_not() {
        let s = |t: Value| object(json!({"n": {"type": t}}), &["n"]);
        assert_eq!(
            output(s(json!("integer")), s(json!("number"))),
            yes("type of `n` widened from integer to number")
        );
        assert_eq!(
            output(s(json!("string")), s(json!(["string", "null"]))),
            yes("type of `n` widened from string to string or null")
        );
        assert_eq!(
            output(s(json!("string")), s(json!("boolean"))),
            yes("type of `n` changed from string to boolean")
        );
        assert_eq!(
            output(s(json!("number")), s(json!("integer"))),
            no("type of `n` narrowed from number to integer")
        );
    }

    #[test]
    fn output_enum_gained_values_breaks_lost_does_not() {
        let s = |e: Value| json!({"properties": {"state": {"enum": e}}});
        assert_eq!(
            output(s(json!(["on"])), s(json!(["on", "off"]))),
            yes(r#"enum of `state` gained "off""#)
        );
        assert_eq!(
            output(s(json!(["on", "off"])), s(json!(["on"]))),
            no(r#"enum of `state` lost "off""#)
        );
    }

    #[test]
    fn output_bounds_loosened_break_tightened_do_not() {
        let n = |v: Value| json!({"properties": {"n": {"maximum": v}}});
        assert_eq!(
            output(n(json!(5)), n(json!(10))),
            yes("maximum of `n` loosened (5 → 10)")
        );
        assert_eq!(
            output(n(json!(10)), n(json!(5))),
            no("maximum of `n` tightened (10 → 5)")
        );
    }

    #[test]
    fn output_schema_added_is_compatible_removed_breaks() {
        let schema = object(json!({"id": {"type": "string"}}), &["id"]);
        let added = change(json!({}), json!({"outputSchema": schema.clone()}));
        assert!(!added.is_breaking(), "{added:?}");
        let removed = change(json!({"outputSchema": schema}), json!({}));
        assert_eq!(
            removed,
            ToolChange::OutputSchemaChanged {
                tool: "t".into(),
                breaking: true,
                reasons: vec![
                    "type of the top level widened from object to any".into(),
                    "required property `id` removed".into(),
                ],
            }
        );
    }
}
