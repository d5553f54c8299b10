//! A small declarative language for "what a JSON value must look like",
//! and the walker that checks values against it.
//!
//! The MCP shapes are static tables of [`Ty`]s; fields carry the versions in
//! which they exist (and in which they are required), so one table serves
//! every protocol version. Whatever the tables cannot say is a [`Rule`]: a
//! hand-written check with a one-line description of what it expects.

use std::fmt::Display;

use serde_json::Value;

use super::version::{ALL, NONE, Version, Versions};
use super::{Violation, ViolationKind};

/// What a JSON value must be.
#[derive(Clone, Copy)]
pub(crate) enum Ty {
    /// Anything (the field only has to be present when required).
    Any,
    Str,
    /// A number without a fractional part (`1.0` counts, as in JSON Schema).
    Int,
    Num,
    Bool,
    /// Any JSON object.
    Object,
    Null,
    /// A JSON-RPC id or progress token: a string or an integer.
    Id,
    /// A number from 0 to 1 (priorities).
    Unit,
    /// An integer of at least 0.
    NonNegInt,
    /// Exactly this string.
    Const(&'static str),
    /// One of these strings.
    Enum(&'static [&'static str]),
    ArrayOf(&'static Ty),
    /// An object whose every member value is this.
    MapOf(&'static Ty),
    Obj(&'static Obj),
    /// The first alternative that fits; otherwise the closest one's problems.
    AnyOf(&'static [Ty]),
    /// Objects told apart by the string in one member (`type`, `method`).
    Tagged(&'static Tagged),
    /// This type exists only in these versions (an alternative of
    /// [`Ty::AnyOf`] that a version does not have is skipped).
    In(Versions, &'static Ty),
    /// Problems inside are reported as this kind (the most specific wins).
    Kind(ViolationKind, &'static Ty),
    Rule(&'static Rule),
}

/// A hand-written check, for what the tables cannot express.
pub(crate) struct Rule {
    /// What the value must be, for messages ("a non-blank string").
    pub(crate) expects: &'static str,
    pub(crate) check: fn(&mut Walker<'_>, &Value),
}

/// An object with known members; unknown members are allowed (as in the
/// official schemas).
pub(crate) struct Obj {
    pub(crate) fields: &'static [Field],
}

/// One member of an [`Obj`].
#[derive(Clone, Copy)]
pub(crate) struct Field {
    pub(crate) name: &'static str,
    pub(crate) ty: Ty,
    /// The versions in which the member is defined (elsewhere it is an
    /// unknown member, which is allowed).
    pub(crate) present: Versions,
    /// The versions in which it must be there.
    pub(crate) required: Versions,
}

impl Field {
    /// A member every version requires.
    pub(crate) const fn req(name: &'static str, ty: Ty) -> Field {
        Field {
            name,
            ty,
            present: ALL,
            required: ALL,
        }
    }

    /// A member every version allows.
    pub(crate) const fn opt(name: &'static str, ty: Ty) -> Field {
        Field {
            name,
            ty,
            present: ALL,
            required: NONE,
        }
    }

    /// The member exists only in `versions`.
    pub(crate) const fn within(self, versions: Versions) -> Field {
        Field {
            present: self.present.and(versions),
            required: self.required.and(versions),
            ..self
        }
    }

    /// The member exists from `v` on.
    pub(crate) const fn since(self, v: Version) -> Field {
        self.within(super::version::since(v))
    }

    /// The member exists up to `v`.
    pub(crate) const fn until(self, v: Version) -> Field {
        self.within(super::version::until(v))
    }

    /// The member is optional in `versions`.
    pub(crate) const fn optional_in(self, versions: Versions) -> Field {
        Field {
            required: self.required.minus(versions),
            ..self
        }
    }
}

/// Objects told apart by the string in member `tag`.
pub(crate) struct Tagged {
    pub(crate) tag: &'static str,
    pub(crate) variants: &'static [Variant],
}

/// One alternative of a [`Tagged`] union.
pub(crate) struct Variant {
    pub(crate) tag: &'static str,
    pub(crate) versions: Versions,
    pub(crate) ty: Ty,
}

impl Variant {
    pub(crate) const fn new(tag: &'static str, versions: Versions, ty: Ty) -> Variant {
        Variant { tag, versions, ty }
    }
}

/// Walks a value against a [`Ty`], collecting violations with JSON pointers
/// rooted where the walk started.
pub(crate) struct Walker<'o> {
    pub(crate) version: Version,
    kind: ViolationKind,
    pointer: String,
    out: &'o mut Vec<Violation>,
}

impl<'o> Walker<'o> {
    /// A walker reporting `kind` at `pointer` and below, into `out`.
    pub(crate) fn new(
        version: Version,
        kind: ViolationKind,
        pointer: &str,
        out: &'o mut Vec<Violation>,
    ) -> Self {
        Walker {
            version,
            kind,
            pointer: pointer.to_owned(),
            out,
        }
    }

    /// The JSON pointer of the value being checked.
    pub(crate) fn pointer(&self) -> &str {
        &self.pointer
    }

    /// Runs `f` one level down, at member `key` (or array index).
    pub(crate) fn at<R>(&mut self, key: impl Display, f: impl FnOnce(&mut Self) -> R) -> R {
        let len = self.pointer.len();
        crate::json::push_key(&mut self.pointer, &key.to_string());
        let result = f(self);
        self.pointer.truncate(len);
        result
    }

    /// Runs `f` reporting problems as `kind`.
    pub(crate) fn as_kind<R>(&mut self, kind: ViolationKind, f: impl FnOnce(&mut Self) -> R) -> R {
        let outer = std::mem::replace(&mut self.kind, kind);
        let result = f(self);
        self.kind = outer;
        result
    }

    /// Runs `f` with a scratch output and returns what it found.
    pub(crate) fn trial(&mut self, f: impl FnOnce(&mut Self)) -> Vec<Violation> {
        let mut scratch = Vec::new();
        std::mem::swap(self.out, &mut scratch);
        f(self);
        std::mem::swap(self.out, &mut scratch);
        scratch
    }

    /// Reports violations found elsewhere (e.g. by [`Walker::trial`]).
    pub(crate) fn extend(&mut self, violations: impl IntoIterator<Item = Violation>) {
        self.out.extend(violations);
    }

    /// The current value, for messages.
    pub(crate) fn here(&self) -> String {
        describe_pointer(&self.pointer)
    }

    /// Reports "`pointer` what" (e.g. "`/a` must not be blank").
    pub(crate) fn fail(&mut self, what: impl Display) {
        let message = format!("{} {what}", self.here());
        self.out
            .push(Violation::new(self.kind, self.pointer.clone(), message));
    }

    /// Reports a message as is, at the current pointer.
    pub(crate) fn report(&mut self, message: String) {
        self.out
            .push(Violation::new(self.kind, self.pointer.clone(), message));
    }

    /// Reports that the current value is not what was expected.
    pub(crate) fn mismatch(&mut self, expects: impl Display, found_value: &Value) {
        self.fail(format_args!(
            "must be {expects}; found {}",
            found(found_value)
        ));
    }

    /// Reports a missing member `name` that must be `expects`.
    pub(crate) fn missing(
        &mut self,
        name: &str,
        expects: impl Display,
        kind: Option<ViolationKind>,
    ) {
        let kind = kind.unwrap_or(self.kind);
        self.as_kind(kind, |w| {
            w.at(name, |w| w.fail(format_args!("is required ({expects})")))
        });
    }

    /// Checks `value` against `ty`.
    pub(crate) fn check(&mut self, ty: &Ty, value: &Value) {
        let fits = match ty {
            Ty::Any => true,
            Ty::Str => value.is_string(),
            Ty::Int => is_integer(value),
            Ty::Num => value.is_number(),
            Ty::Bool => value.is_boolean(),
            Ty::Object => value.is_object(),
            Ty::Null => value.is_null(),
            Ty::Id => value.is_string() || is_integer(value),
            Ty::Unit => value.as_f64().is_some_and(|n| (0.0..=1.0).contains(&n)),
            Ty::NonNegInt => is_integer(value) && value.as_f64().is_some_and(|n| n >= 0.0),
            Ty::Const(c) => value.as_str() == Some(c),
            Ty::Enum(options) => value.as_str().is_some_and(|s| options.contains(&s)),
            Ty::ArrayOf(item) => return self.array_of(item, value),
            Ty::MapOf(member) => return self.map_of(member, value),
            Ty::Obj(obj) => return self.obj(obj, value),
            Ty::AnyOf(alternatives) => return self.any_of(ty, alternatives, value),
            Ty::Tagged(tagged) => return self.tagged(tagged, value),
            Ty::In(versions, inner) if versions.contains(self.version) => {
                return self.check(inner, value);
            }
            Ty::In(versions, _) => {
                return self.fail(format_args!(
                    "is not allowed in {} (only in {})",
                    self.version.as_str(),
                    versions.describe()
                ));
            }
            Ty::Kind(kind, inner) => return self.as_kind(*kind, |w| w.check(inner, value)),
            Ty::Rule(rule) => return (rule.check)(self, value),
        };
        if !fits {
            self.mismatch(expects(ty, self.version), value);
        }
    }

    fn array_of(&mut self, item: &Ty, value: &Value) {
        let Some(items) = value.as_array() else {
            return self.mismatch("an array", value);
        };
        for (i, element) in items.iter().enumerate() {
            self.at(i, |w| w.check(item, element));
        }
    }

    fn map_of(&mut self, member: &Ty, value: &Value) {
        let Some(map) = value.as_object() else {
            return self.mismatch("an object", value);
        };
        for (key, element) in map {
            self.at(key, |w| w.check(member, element));
        }
    }

    /// Checks the members `obj` defines in this version.
    pub(crate) fn obj(&mut self, obj: &Obj, value: &Value) {
        let Some(map) = value.as_object() else {
            return self.mismatch("an object", value);
        };
        let version = self.version;
        for field in obj.fields.iter().filter(|f| f.present.contains(version)) {
            match map.get(field.name) {
                Some(member) => self.at(field.name, |w| w.check(&field.ty, member)),
                None if field.required.contains(version) => {
                    self.missing(field.name, expects(&field.ty, version), kind_of(&field.ty))
                }
                None => {}
            }
        }
    }

    /// Tries `check` with each alternative: `Ok` when one fits, else the
    /// problems of the closest (fewest problems; `None` if there were no
    /// alternatives). Nothing is reported.
    pub(crate) fn first_fit<T>(
        &mut self,
        alternatives: impl IntoIterator<Item = T>,
        mut check: impl FnMut(&mut Self, T),
    ) -> Result<(), Option<Vec<Violation>>> {
        let mut closest: Option<Vec<Violation>> = None;
        for alternative in alternatives {
            let found = self.trial(|w| check(w, alternative));
            if found.is_empty() {
                return Ok(());
            }
            if closest.as_ref().is_none_or(|c| found.len() < c.len()) {
                closest = Some(found);
            }
        }
        Err(closest)
    }

    fn any_of(&mut self, ty: &Ty, alternatives: &[Ty], value: &Value) {
        let version = self.version;
        let available = alternatives.iter().filter(|t| available(t, version));
        let Err(closest) = self.first_fit(available, |w, alternative| w.check(alternative, value))
        else {
            return;
        };
        match closest {
            // Every alternative failed on the value itself: say what fits.
            Some(found) if found.iter().all(|v| v.pointer == self.pointer) => {
                self.mismatch(expects(ty, self.version), value)
            }
            Some(found) => self.extend(found),
            None => self.mismatch(expects(ty, self.version), value),
        }
    }

    fn tagged(&mut self, tagged: &Tagged, value: &Value) {
        let Some(map) = value.as_object() else {
            return self.mismatch("an object", value);
        };
        let version = self.version;
        let mut variants = tagged
            .variants
            .iter()
            .filter(|v| v.versions.contains(version));
        let one_of = || {
            let tags: Vec<&str> = tagged
                .variants
                .iter()
                .filter(|v| v.versions.contains(version))
                .map(|v| v.tag)
                .collect();
            format!("one of {}", tags.join(", "))
        };
        match map.get(tagged.tag) {
            None => self.missing(tagged.tag, one_of(), None),
            Some(tag) => match variants.find(|v| tag.as_str() == Some(v.tag)) {
                Some(variant) => self.check(&variant.ty, value),
                None => self.at(tagged.tag, |w| w.mismatch(one_of(), tag)),
            },
        }
    }
}

/// Whether a value is a JSON Schema "integer" (`1.0` is one).
pub(crate) fn is_integer(value: &Value) -> bool {
    value.is_i64()
        || value.is_u64()
        || value
            .as_f64()
            .is_some_and(|n| n.is_finite() && n.fract() == 0.0)
}

/// "`/a/b`", or "the value" for the root.
pub(crate) fn describe_pointer(pointer: &str) -> String {
    if pointer.is_empty() {
        "the value".to_owned()
    } else {
        format!("`{pointer}`")
    }
}

/// A short rendering of a value for "found …" in messages.
pub(crate) fn found(value: &Value) -> String {
    const LIMIT: usize = 60;
    match value {
        Value::Object(_) => "an object".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::String(s) if s.chars().count() > LIMIT => {
            let cut: String = s.chars().take(LIMIT).collect();
            format!("{}…", Value::String(cut))
        }
        other => other.to_string(),
    }
}

/// What a value of `ty` is, for messages ("a string", "one of a, b").
pub(crate) fn expects(ty: &Ty, version: Version) -> String {
    match ty {
        Ty::Any => "any value".to_owned(),
        Ty::Str => "a string".to_owned(),
        Ty::Int => "an integer".to_owned(),
        Ty::Num => "a number".to_owned(),
        Ty::Bool => "a boolean".to_owned(),
        Ty::Null => "null".to_owned(),
        Ty::Object | Ty::MapOf(_) | Ty::Obj(_) | Ty::Tagged(_) => "an object".to_owned(),
        Ty::Id => "a string or an integer".to_owned(),
        Ty::Unit => "a number from 0 to 1".to_owned(),
        Ty::NonNegInt => "a non-negative integer".to_owned(),
        Ty::Const(c) => Value::from(*c).to_string(),
        Ty::Enum(options) => format!("one of {}", options.join(", ")),
        Ty::ArrayOf(item) => match **item {
            Ty::Str => "an array of strings".to_owned(),
            _ => "an array".to_owned(),
        },
        Ty::AnyOf(alternatives) => {
            let mut names: Vec<String> = Vec::new();
            for alternative in alternatives.iter().filter(|t| available(t, version)) {
                let name = expects(alternative, version);
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => names.join(""),
            }
        }
        Ty::In(_, inner) | Ty::Kind(_, inner) => expects(inner, version),
        Ty::Rule(rule) => rule.expects.to_owned(),
    }
}

/// The kind a type reports as, if it sets one.
fn kind_of(ty: &Ty) -> Option<ViolationKind> {
    match ty {
        Ty::Kind(kind, _) => Some(*kind),
        _ => None,
    }
}

fn available(ty: &Ty, version: Version) -> bool {
    !matches!(ty, Ty::In(versions, _) if !versions.contains(version))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::version::{V2024_11_05, V2025_06_18, since};
    use serde_json::json;

    static POINT: Obj = Obj {
        fields: &[
            Field::req("x", Ty::Int),
            Field::opt("label", Ty::Str),
            Field::req("z", Ty::Num).since(V2025_06_18),
        ],
    };

    fn run(version: Version, ty: &Ty, value: &Value) -> Vec<Violation> {
        let mut out = Vec::new();
        Walker::new(version, ViolationKind::ResultShape, "", &mut out).check(ty, value);
        out
    }

    #[test]
    fn fields_follow_versions() {
        let point = Ty::Obj(&POINT);
        assert!(run(V2024_11_05, &point, &json!({"x": 1})).is_empty());
        let found = run(V2025_06_18, &point, &json!({"x": 1.0, "label": 3}));
        let messages: Vec<&str> = found.iter().map(|v| v.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "`/label` must be a string; found 3",
                "`/z` is required (a number)"
            ]
        );
        assert_eq!(found[1].pointer, "/z");
    }

    #[test]
    fn any_of_reports_the_closest_alternative_or_what_fits() {
        static EITHER: [Ty; 2] = [Ty::Obj(&POINT), Ty::ArrayOf(&Ty::Str)];
        let either = Ty::AnyOf(&EITHER);
        assert!(run(V2024_11_05, &either, &json!(["a"])).is_empty());
        let found = run(V2024_11_05, &either, &json!(5));
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].message,
            "the value must be an object or an array of strings; found 5"
        );
        let found = run(V2024_11_05, &either, &json!({"x": "1"}));
        assert_eq!(found[0].pointer, "/x");
    }

    #[test]
    fn tagged_unions_list_the_tags_of_the_version() {
        static SHAPES: Tagged = Tagged {
            tag: "type",
            variants: &[
                Variant::new("point", ALL, Ty::Obj(&POINT)),
                Variant::new("other", since(V2025_06_18), Ty::Object),
            ],
        };
        let shape = Ty::Tagged(&SHAPES);
        let found = run(V2024_11_05, &shape, &json!({"type": "other"}));
        assert_eq!(
            found[0].message,
            "`/type` must be one of point; found \"other\""
        );
        let found = run(V2025_06_18, &shape, &json!({}));
        assert_eq!(
            found[0].message,
            "`/type` is required (one of point, other)"
        );
    }

    #[test]
    fn pointers_escape_and_kinds_nest() {
        static INNER: Ty = Ty::Kind(ViolationKind::Content, &Ty::Str);
        static MAP: Ty = Ty::MapOf(&INNER);
        let found = run(V2024_11_05, &MAP, &json!({"a/b~c": 1}));
        assert_eq!(found[0].pointer, "/a~1b~0c");
        assert_eq!(found[0].kind, ViolationKind::Content);
    }
}
