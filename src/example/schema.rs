//! A value a JSON Schema accepts, made from the schema alone.
//!
//! The walk is deterministic: `const`, then `examples` and `default` (when
//! the schema accepts them), then the first `enum` value, then a value of
//! the schema's type within its bounds (`minimum`…`multipleOf`, lengths,
//! `pattern`, `format`, item and property counts). Objects get their
//! required properties and, where nothing forbids it, their optional ones;
//! `$ref`s within the schema are followed, `allOf` is merged, and the first
//! `anyOf`/`oneOf` branch the schema accepts is taken. The result is
//! validated with the `jsonschema` crate; when it fails, plainer walks are
//! tried (no hints, then no optional properties and the fewest items).

use serde_json::{Map, Number, Value, json};

use super::pattern;

/// Nesting beyond which objects get only required properties and arrays
/// only the items they need (recursive schemas end there).
const SHALLOW: usize = 6;
/// Nesting at which the walk stops (a `$ref` loop with required members).
const DEEPEST: usize = 32;
/// At most this many items, properties or characters are made for a
/// minimum (a fixture must not exhaust memory over a typo).
const LARGEST: u64 = 10_000;

/// A value `schema` accepts: see the module documentation. A schema no
/// value satisfies (or one the walk cannot satisfy) still gets its best
/// attempt, which validation then rejects.
pub fn from_schema(schema: &Value) -> Value {
    let validator = compile(schema);
    let mut attempt = Value::Null;
    for style in [Style::Rich, Style::Plain, Style::Minimal] {
        attempt = Walk {
            root: schema,
            style,
        }
        .value(schema, 0, 0);
        match &validator {
            Some(validator) if !validator.is_valid(&attempt) => continue,
            _ => return attempt,
        }
    }
    attempt
}

/// Whether `schema` accepts `value`, formats included (`date-time`, `uri`,
/// `email`, `uuid`, …); `None` when the schema does not compile (invalid,
/// or a `$ref` that would need the network).
pub(crate) fn accepts(schema: &Value, value: &Value) -> Option<bool> {
    compile(schema).map(|validator| validator.is_valid(value))
}

/// The schema compiled as its `$schema` says, else as 2020-12, else as
/// draft-07 (tuple `items`, legacy MCP's default).
fn compile(schema: &Value) -> Option<jsonschema::Validator> {
    let options = || jsonschema::options().should_validate_formats(true);
    options().build(schema).ok().or_else(|| {
        options()
            .with_draft(jsonschema::Draft::Draft7)
            .build(schema)
            .ok()
    })
}

/// How much a walk puts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// `examples` and `default` preferred; optional properties; one item
    /// in arrays with no minimum.
    Rich,
    /// The same without the hints.
    Plain,
    /// Required properties only, the fewest items.
    Minimal,
}

struct Walk<'a> {
    root: &'a Value,
    style: Style,
}

impl Walk<'_> {
    /// A value for `schema` at nesting `depth`; `variant` tells apart items
    /// that must be unique.
    fn value(&self, schema: &Value, depth: usize, variant: usize) -> Value {
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(_) => return any(variant),
            _ => return Value::Null,
        };
        if depth > DEEPEST {
            return Value::Null;
        }
        if let Some(target) = map.get("$ref").and_then(Value::as_str) {
            let mut siblings = map.clone();
            siblings.remove("$ref");
            let merged = match self.resolve(target) {
                Some(target) if has_constraints(&siblings) => {
                    merge(&Value::Object(siblings.clone()), target)
                }
                Some(target) => target.clone(),
                None => Value::Object(siblings),
            };
            return self.value(&merged, depth + 1, variant);
        }
        if let Some(Value::Array(members)) = map.get("allOf") {
            let mut merged = map.clone();
            merged.remove("allOf");
            let mut merged = Value::Object(merged);
            for member in members {
                merged = merge(&merged, &self.dereference(member));
            }
            return self.value(&merged, depth + 1, variant);
        }
        if let Some(value) = map.get("const") {
            return value.clone();
        }
        if self.style == Style::Rich {
            let hints = map.get("examples").and_then(Value::as_array);
            let hint = hints
                .into_iter()
                .flatten()
                .chain(map.get("default"))
                .find(|hint| self.fits(schema, hint));
            if let Some(hint) = hint {
                return hint.clone();
            }
        }
        if let Some(Value::Array(values)) = map.get("enum")
            && !values.is_empty()
        {
            return values[variant % values.len()].clone();
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(Value::Array(branches)) = map.get(key) {
                return self.branch(map, key, branches, depth, variant);
            }
        }
        match type_of(map) {
            Some("object") => self.object(map, depth, variant),
            Some("array") => self.array(map, depth, variant),
            Some("string") => string(map, variant),
            Some("integer") => number(map, true, variant),
            Some("number") => number(map, false, variant),
            Some("boolean") => json!(variant.is_multiple_of(2)),
            Some("null") => Value::Null,
            _ => any(variant),
        }
    }

    /// The first branch (nulls last) whose value the whole schema accepts,
    /// each branch merged with what the schema says beside it.
    fn branch(
        &self,
        map: &Map<String, Value>,
        key: &str,
        branches: &[Value],
        depth: usize,
        variant: usize,
    ) -> Value {
        let mut rest = map.clone();
        rest.remove(key);
        let rest = Value::Object(rest);
        let whole = Value::Object(map.clone());
        let mut ordered: Vec<&Value> = branches.iter().filter(|b| !is_null_type(b)).collect();
        ordered.extend(branches.iter().filter(|b| is_null_type(b)));
        let mut first = None;
        for branch in ordered {
            let merged = merge(&rest, &self.dereference(branch));
            let candidate = self.value(&merged, depth + 1, variant);
            if self.fits(&whole, &candidate) {
                return candidate;
            }
            first.get_or_insert(candidate);
        }
        first.unwrap_or(Value::Null)
    }

    fn object(&self, map: &Map<String, Value>, depth: usize, variant: usize) -> Value {
        let empty = Map::new();
        let properties = map
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let most = upper_bound(map, "maxProperties");
        let optional = self.style != Style::Minimal && depth < SHALLOW;
        let room = most.saturating_sub(required.len());
        let mut out = Map::new();
        let mut optionals = 0;
        for (name, schema) in properties {
            let wanted = if required.contains(&name.as_str()) {
                true
            } else if optional && optionals < room && *schema != Value::Bool(false) {
                optionals += 1;
                true
            } else {
                false
            };
            if wanted {
                out.insert(name.clone(), self.value(schema, depth + 1, variant));
            }
        }
        for name in required {
            if !out.contains_key(name) {
                let schema = self.property_schema(map, name);
                out.insert(name.to_owned(), self.value(&schema, depth + 1, variant));
            }
        }
        let least = lower_bound(map, "minProperties");
        let extra = map
            .get("additionalProperties")
            .unwrap_or(&Value::Bool(true));
        let mut n = 1;
        while out.len() < least && *extra != Value::Bool(false) && n <= least + properties.len() {
            let name = format!("property{n}");
            n += 1;
            if !out.contains_key(&name) {
                out.insert(name, self.value(extra, depth + 1, variant));
            }
        }
        Value::Object(out)
    }

    /// The schema of a property `properties` does not name: the first
    /// `patternProperties` entry matching it, else `additionalProperties`.
    fn property_schema(&self, map: &Map<String, Value>, name: &str) -> Value {
        let patterns = map.get("patternProperties").and_then(Value::as_object);
        for (regex, schema) in patterns.into_iter().flatten() {
            if pattern::matches(regex, name) == Some(true) {
                return schema.clone();
            }
        }
        match map.get("additionalProperties") {
            Some(schema @ Value::Object(_)) => schema.clone(),
            _ => json!({}),
        }
    }

    fn array(&self, map: &Map<String, Value>, depth: usize, variant: usize) -> Value {
        // 2020-12 `prefixItems` + `items`; draft-07 tuple `items` +
        // `additionalItems`.
        let (prefix, rest) = match (map.get("prefixItems"), map.get("items")) {
            (Some(Value::Array(prefix)), items) => (prefix.as_slice(), items),
            (_, Some(Value::Array(prefix))) => (prefix.as_slice(), map.get("additionalItems")),
            (_, items) => (&[][..], items),
        };
        let least = lower_bound(map, "minItems");
        let most = upper_bound(map, "maxItems");
        let wanted = match self.style {
            Style::Minimal => least,
            _ if depth >= SHALLOW => least,
            _ => least.max(prefix.len()).max(1),
        };
        let mut count = wanted.min(most);
        if rest == Some(&Value::Bool(false)) {
            count = count.min(prefix.len());
        }
        let unique = map.get("uniqueItems") == Some(&Value::Bool(true));
        let anything = json!({});
        let mut items: Vec<Value> = (0..count)
            .map(|i| {
                let schema = prefix.get(i).or(rest).unwrap_or(&anything);
                let variant = if unique { i } else { variant };
                self.value(schema, depth + 1, variant)
            })
            .collect();
        if let Some(contains) = map.get("contains")
            && !items.iter().any(|item| self.fits(contains, item))
        {
            let item = self.value(contains, depth + 1, items.len());
            if items.is_empty() || items.len() < most {
                items.push(item);
            } else {
                items[0] = item;
            }
        }
        Value::Array(items)
    }

    /// What a `$ref` within the root points at (`#`, `#/$defs/x`, any
    /// JSON pointer fragment); `None` for anything else (anchors, other
    /// documents, the network).
    fn resolve(&self, target: &str) -> Option<&Value> {
        let pointer = target.strip_prefix('#')?;
        let pointer = percent_encoding::percent_decode_str(pointer)
            .decode_utf8()
            .ok()?;
        self.root.pointer(&pointer)
    }

    /// A schema with its own top-level `$ref` followed (for merging).
    fn dereference(&self, schema: &Value) -> Value {
        let mut schema = schema.clone();
        for _ in 0..DEEPEST {
            let Some(target) = schema.get("$ref").and_then(Value::as_str) else {
                break;
            };
            let Some(resolved) = self.resolve(target) else {
                break;
            };
            let mut siblings = schema.as_object().cloned().unwrap_or_default();
            siblings.remove("$ref");
            schema = merge(&Value::Object(siblings), resolved);
        }
        schema
    }

    /// Whether `schema` (a part of the root, which its `$ref`s may name)
    /// accepts `value`; a part that does not compile on its own is assumed
    /// to (the whole value is validated at the end anyway).
    fn fits(&self, schema: &Value, value: &Value) -> bool {
        let mut wrapped = match schema {
            Value::Object(map) => map.clone(),
            Value::Bool(accepts) => return *accepts,
            _ => return true,
        };
        if let Value::Object(root) = self.root {
            for key in ["$schema", "$defs", "definitions"] {
                if let (Some(value), false) = (root.get(key), wrapped.contains_key(key)) {
                    wrapped.insert(key.to_owned(), value.clone());
                }
            }
        }
        accepts(&Value::Object(wrapped), value).unwrap_or(true)
    }
}

/// Keywords that only annotate (they do not change what is accepted).
const ANNOTATIONS: [&str; 8] = [
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "definitions",
    "title",
    "description",
    "examples",
];

fn has_constraints(map: &Map<String, Value>) -> bool {
    map.keys().any(|k| !ANNOTATIONS.contains(&k.as_str()))
}

fn is_null_type(schema: &Value) -> bool {
    schema.get("type") == Some(&json!("null")) || schema.get("const") == Some(&Value::Null)
}

/// Anything: a schema that says nothing (`{}`, `true`).
fn any(variant: usize) -> Value {
    json!(label("example", variant))
}

fn label(base: &str, variant: usize) -> String {
    if variant == 0 {
        base.to_owned()
    } else {
        format!("{base}{variant}")
    }
}

/// The type to make: `type` (the first that is not `null`, when it lists
/// several), else what the keywords imply.
fn type_of(map: &Map<String, Value>) -> Option<&str> {
    match map.get("type") {
        Some(Value::String(ty)) => return Some(ty),
        Some(Value::Array(types)) => {
            let types: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            return types
                .iter()
                .find(|t| **t != "null")
                .or(types.first())
                .copied();
        }
        _ => {}
    }
    let has = |keys: &[&str]| keys.iter().any(|k| map.contains_key(*k));
    if has(&[
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "minProperties",
        "maxProperties",
    ]) {
        Some("object")
    } else if has(&["items", "prefixItems", "minItems", "maxItems", "contains"]) {
        Some("array")
    } else if has(&["minLength", "maxLength", "pattern", "format"]) {
        Some("string")
    } else if has(&[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]) {
        Some("number")
    } else {
        None
    }
}

/// A `min…` keyword's count (0 when absent), capped at [`LARGEST`].
fn lower_bound(map: &Map<String, Value>, keyword: &str) -> usize {
    map.get(keyword)
        .and_then(Value::as_u64)
        .unwrap_or(0)
        .min(LARGEST) as usize
}

/// A `max…` keyword's count (no limit when absent).
fn upper_bound(map: &Map<String, Value>, keyword: &str) -> usize {
    map.get(keyword)
        .and_then(Value::as_u64)
        .map_or(usize::MAX, |n| n as usize)
}

fn string(map: &Map<String, Value>, variant: usize) -> Value {
    let least = lower_bound(map, "minLength");
    let most = upper_bound(map, "maxLength");
    let regex = map.get("pattern").and_then(Value::as_str);
    let format = map.get("format").and_then(Value::as_str);
    let mut text = format
        .and_then(|f| formatted(f, variant))
        .or_else(|| regex.and_then(pattern::example))
        .or_else(|| {
            (map.get("contentEncoding") == Some(&json!("base64")))
                .then(|| "ZXhhbXBsZQ==".to_owned())
        })
        .unwrap_or_else(|| label("example", variant));
    let length = text.chars().count();
    if length < least {
        let padded = format!("{text}{}", "x".repeat(least - length));
        // A pattern anchored at the end may refuse the padding: pad the
        // front instead.
        text = match regex.map(|r| pattern::matches(r, &padded)) {
            Some(Some(false)) => format!("{}{text}", "x".repeat(least - length)),
            _ => padded,
        };
    } else if length > most {
        text = text.chars().take(most).collect();
    }
    Value::String(text)
}

/// A valid string of a `format` JSON Schema defines (or OpenAPI adds).
fn formatted(format: &str, variant: usize) -> Option<String> {
    let n = variant;
    Some(match format {
        "date-time" => format!("2026-01-01T00:00:{:02}Z", n % 60),
        "date" => format!("2026-01-{:02}", 1 + n % 28),
        "time" => format!("00:00:{:02}Z", n % 60),
        "duration" => format!("PT{}S", n + 1),
        "email" | "idn-email" => format!("{}@example.com", label("user", n)),
        "hostname" | "idn-hostname" => {
            if n == 0 {
                "example.com".to_owned()
            } else {
                format!("host{n}.example.com")
            }
        }
        "ipv4" => format!("192.0.2.{}", 1 + n % 254),
        "ipv6" => format!("2001:db8::{:x}", n + 1),
        "uri" | "iri" | "url" | "uri-reference" | "iri-reference" => {
            format!(
                "https://example.com/{}",
                if n == 0 { String::new() } else { n.to_string() }
            )
        }
        "uri-template" => format!("https://example.com/{}{{id}}", label("items", n) + "/"),
        "uuid" => format!("00000000-0000-4000-8000-{n:012x}"),
        "json-pointer" => format!("/{}", label("example", n)),
        "relative-json-pointer" => format!("{n}"),
        "regex" => format!("^{}$", label("example", n)),
        "byte" => "ZXhhbXBsZQ==".to_owned(),
        _ => return None,
    })
}

/// A number within the bounds (inclusive `minimum`/`maximum`, exclusive
/// ones in either draft's spelling) and a multiple of `multipleOf`: the
/// lowest allowed, or 0 when the bounds allow it.
fn number(map: &Map<String, Value>, integer: bool, variant: usize) -> Value {
    let get = |key: &str| map.get(key).and_then(Value::as_f64);
    let flag = |key: &str| map.get(key) == Some(&Value::Bool(true));
    // (bound, exclusive)
    let lower = match (get("minimum"), get("exclusiveMinimum")) {
        (Some(min), Some(x)) if x >= min => Some((x, true)),
        (Some(min), _) => Some((min, flag("exclusiveMinimum"))),
        (None, Some(x)) => Some((x, true)),
        (None, None) => None,
    };
    let upper = match (get("maximum"), get("exclusiveMaximum")) {
        (Some(max), Some(x)) if x <= max => Some((x, true)),
        (Some(max), _) => Some((max, flag("exclusiveMaximum"))),
        (None, Some(x)) => Some((x, true)),
        (None, None) => None,
    };
    let step = get("multipleOf").filter(|m| *m > 0.0);
    let unit = match (step, integer) {
        (Some(step), true) if step.fract() != 0.0 => lcm_with_one(step),
        (Some(step), _) => step,
        (None, true) => 1.0,
        (None, false) => 1.0,
    };
    let above = |x: f64, exclusive: bool| {
        // The first multiple of `unit` at or above x (above, if exclusive).
        let k = (x / unit).ceil();
        let v = k * unit;
        if exclusive && v <= x { v + unit } else { v }
    };
    let mut value = match (lower, upper) {
        (Some((low, exclusive)), _) => above(low, exclusive),
        (None, Some((high, exclusive))) if high < 0.0 || (high == 0.0 && exclusive) => {
            let k = (high / unit).floor();
            let v = k * unit;
            if exclusive && v >= high { v - unit } else { v }
        }
        _ => 0.0,
    };
    let fits_upper = |v: f64| match upper {
        Some((high, true)) => v < high,
        Some((high, false)) => v <= high,
        None => true,
    };
    let shifted = value + unit * variant as f64;
    if fits_upper(shifted) {
        value = shifted;
    }
    if !integer
        && step.is_none()
        && !fits_upper(value)
        && let (Some((low, _)), Some((high, _))) = (lower, upper)
    {
        // No multiple of 1 fits between exclusive bounds: the midpoint does.
        value = (low + high) / 2.0;
    }
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        json!(value as i64)
    } else {
        Number::from_f64(value).map_or(Value::Null, Value::Number)
    }
}

/// The smallest integer multiple of a fractional `multipleOf` (0.5 → 1,
/// 0.25 → 1, 1.5 → 3).
fn lcm_with_one(step: f64) -> f64 {
    (1..=1000)
        .map(|k| step * f64::from(k))
        .find(|v| (v - v.round()).abs() < 1e-9)
        .map_or(step, f64::round)
}

/// Two schemas as one: what both require (`properties` and `required`
/// united, the stricter bound, the common types and `enum` values), else
/// whichever says something. Good enough for `allOf` and for a branch
/// beside its siblings; the result is validated anyway.
fn merge(a: &Value, b: &Value) -> Value {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return match b {
            Value::Bool(true) => a.clone(),
            _ => b.clone(),
        };
    };
    let mut out = a.clone();
    for (key, theirs) in b {
        let Some(ours) = out.get(key).cloned() else {
            out.insert(key.clone(), theirs.clone());
            continue;
        };
        let merged = match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" => match (ours, theirs) {
                (Value::Object(mut ours), Value::Object(theirs)) => {
                    for (name, schema) in theirs {
                        let combined = match ours.get(name) {
                            Some(mine) => json!({"allOf": [mine, schema]}),
                            None => schema.clone(),
                        };
                        ours.insert(name.clone(), combined);
                    }
                    Value::Object(ours)
                }
                (ours, _) => ours,
            },
            "required" => {
                let mut all: Vec<Value> = ours.as_array().cloned().unwrap_or_default();
                for name in theirs.as_array().into_iter().flatten() {
                    if !all.contains(name) {
                        all.push(name.clone());
                    }
                }
                Value::Array(all)
            }
            "type" => {
                let list = |v: &Value| -> Vec<String> {
                    match v {
                        Value::String(s) => vec![s.clone()],
                        Value::Array(a) => a
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect(),
                        _ => Vec::new(),
                    }
                };
                let (mine, other) = (list(&ours), list(theirs));
                let common: Vec<String> = mine
                    .iter()
                    .filter_map(|t| {
                        if other.contains(t) {
                            Some(t.clone())
                        } else if t == "number" && other.iter().any(|o| o == "integer")
                            || t == "integer" && other.iter().any(|o| o == "number")
                        {
                            Some("integer".to_owned())
                        } else {
                            None
                        }
                    })
                    .collect();
                match common.len() {
                    0 => ours,
                    1 => json!(common[0]),
                    _ => json!(common),
                }
            }
            "minimum" | "minLength" | "minItems" | "minProperties" => {
                stricter(&ours, theirs, f64::max)
            }
            "maximum" | "maxLength" | "maxItems" | "maxProperties" => {
                stricter(&ours, theirs, f64::min)
            }
            "exclusiveMinimum" if ours.is_number() => stricter(&ours, theirs, f64::max),
            "exclusiveMaximum" if ours.is_number() => stricter(&ours, theirs, f64::min),
            "enum" => match (ours.as_array(), theirs.as_array()) {
                (Some(mine), Some(other)) => {
                    let common: Vec<Value> =
                        mine.iter().filter(|v| other.contains(v)).cloned().collect();
                    if common.is_empty() {
                        ours
                    } else {
                        Value::Array(common)
                    }
                }
                _ => ours,
            },
            "additionalProperties" | "items" if ours.is_object() && theirs.is_object() => {
                json!({"allOf": [ours, theirs]})
            }
            _ => ours,
        };
        out.insert(key.clone(), merged);
    }
    Value::Object(out)
}

fn stricter(a: &Value, b: &Value, pick: fn(f64, f64) -> f64) -> Value {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => {
            let chosen = pick(x, y);
            if chosen == x { a.clone() } else { b.clone() }
        }
        _ => a.clone(),
    }
}
