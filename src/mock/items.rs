//! What a mock server offers: tools, resources, resource templates and
//! prompts, each built up as the JSON object its list result shows.
//!
//! Each item keeps its definition as a JSON object, so anything a builder
//! method does not cover (`icons`, `_meta`, fields of later protocol
//! versions, deliberately malformed ones) can still be set with `field`.

use serde_json::{Map, Value, json};

/// Sets `key` on a definition object.
fn set(definition: &mut Map<String, Value>, key: &str, value: Value) {
    definition.insert(key.to_owned(), value);
}

fn string(definition: &Map<String, Value>, key: &str) -> String {
    definition
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A tool as `tools/list` shows it.
///
/// `Tool::new("echo")` starts with the one schema every tool needs
/// (`{"type": "object"}`), so a tool is valid before anything else is said.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool(Map<String, Value>);

impl Tool {
    /// A tool named `name` that takes any object.
    pub fn new(name: &str) -> Self {
        let mut definition = Map::new();
        set(&mut definition, "name", json!(name));
        set(&mut definition, "inputSchema", json!({"type": "object"}));
        Tool(definition)
    }

    /// A tool from its whole `tools/list` definition, kept verbatim (for
    /// definitions copied from a real server or a fixture).
    pub fn from_definition(definition: Map<String, Value>) -> Self {
        Tool(definition)
    }

    /// `description`: what a model reads to decide whether to call it.
    pub fn description(self, text: &str) -> Self {
        self.field("description", json!(text))
    }

    /// `title`: the human-readable name (2025-06-18 and later).
    pub fn title(self, title: &str) -> Self {
        self.field("title", json!(title))
    }

    /// `inputSchema`: the JSON Schema of the arguments.
    pub fn input_schema(self, schema: Value) -> Self {
        self.field("inputSchema", schema)
    }

    /// `outputSchema`: the JSON Schema of `structuredContent`.
    pub fn output_schema(self, schema: Value) -> Self {
        self.field("outputSchema", schema)
    }

    /// `annotations` (`readOnlyHint`, `destructiveHint`, …).
    pub fn annotations(self, annotations: Value) -> Self {
        self.field("annotations", annotations)
    }

    /// Any other field, verbatim (including ones no specification has).
    pub fn field(mut self, key: &str, value: Value) -> Self {
        set(&mut self.0, key, value);
        self
    }

    /// Its `name`.
    pub fn name(&self) -> String {
        string(&self.0, "name")
    }

    /// Its `outputSchema`, if it declares one.
    pub(crate) fn declared_output_schema(&self) -> Option<&Value> {
        self.0.get("outputSchema")
    }

    /// The definition `tools/list` shows.
    pub fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }
}

/// A resource as `resources/list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource(Map<String, Value>);

impl Resource {
    /// The resource at `uri`, called `name`.
    pub fn new(uri: &str, name: &str) -> Self {
        let mut definition = Map::new();
        set(&mut definition, "uri", json!(uri));
        set(&mut definition, "name", json!(name));
        Resource(definition)
    }

    /// A resource from its whole `resources/list` definition, verbatim.
    pub fn from_definition(definition: Map<String, Value>) -> Self {
        Resource(definition)
    }

    /// `mimeType`; also put on the contents [`super::Respond::text`] makes.
    pub fn mime_type(self, mime_type: &str) -> Self {
        self.field("mimeType", json!(mime_type))
    }

    /// `description`.
    pub fn description(self, text: &str) -> Self {
        self.field("description", json!(text))
    }

    /// `title`.
    pub fn title(self, title: &str) -> Self {
        self.field("title", json!(title))
    }

    /// Any other field, verbatim.
    pub fn field(mut self, key: &str, value: Value) -> Self {
        set(&mut self.0, key, value);
        self
    }

    /// Its `uri`.
    pub fn uri(&self) -> String {
        string(&self.0, "uri")
    }

    /// Its `mimeType`, if it has one.
    pub fn mime(&self) -> Option<String> {
        self.0
            .get("mimeType")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// The definition `resources/list` shows.
    pub fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }
}

/// A resource template as `resources/templates/list` shows it. Reads of
/// URIs no resource has go to the first template whose `uriTemplate`
/// matches (`{var}` stands for any text without `/`).
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceTemplate(Map<String, Value>);

impl ResourceTemplate {
    /// The template `uri_template` (RFC 6570 level 1), called `name`.
    pub fn new(uri_template: &str, name: &str) -> Self {
        let mut definition = Map::new();
        set(&mut definition, "uriTemplate", json!(uri_template));
        set(&mut definition, "name", json!(name));
        ResourceTemplate(definition)
    }

    /// A template from its whole definition, verbatim.
    pub fn from_definition(definition: Map<String, Value>) -> Self {
        ResourceTemplate(definition)
    }

    /// `mimeType`.
    pub fn mime_type(self, mime_type: &str) -> Self {
        self.field("mimeType", json!(mime_type))
    }

    /// `description`.
    pub fn description(self, text: &str) -> Self {
        self.field("description", json!(text))
    }

    /// `title`.
    pub fn title(self, title: &str) -> Self {
        self.field("title", json!(title))
    }

    /// Any other field, verbatim.
    pub fn field(mut self, key: &str, value: Value) -> Self {
        set(&mut self.0, key, value);
        self
    }

    /// Its `uriTemplate`.
    pub fn uri_template(&self) -> String {
        string(&self.0, "uriTemplate")
    }

    /// Its `mimeType`, if it has one.
    pub fn mime(&self) -> Option<String> {
        self.0
            .get("mimeType")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// Whether `uri` is one of the URIs the template describes.
    pub fn matches(&self, uri: &str) -> bool {
        crate::fixture::uri_template_matches(&self.uri_template(), uri)
    }

    /// The definition `resources/templates/list` shows.
    pub fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }
}

/// A prompt as `prompts/list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt(Map<String, Value>);

impl Prompt {
    /// A prompt called `name`, without arguments.
    pub fn new(name: &str) -> Self {
        let mut definition = Map::new();
        set(&mut definition, "name", json!(name));
        Prompt(definition)
    }

    /// A prompt from its whole definition, verbatim.
    pub fn from_definition(definition: Map<String, Value>) -> Self {
        Prompt(definition)
    }

    /// `description`.
    pub fn description(self, text: &str) -> Self {
        self.field("description", json!(text))
    }

    /// `title`.
    pub fn title(self, title: &str) -> Self {
        self.field("title", json!(title))
    }

    /// Adds an argument to `arguments`, in order.
    pub fn argument(mut self, name: &str, required: bool) -> Self {
        let arguments = self
            .0
            .entry("arguments")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(arguments) = arguments {
            arguments.push(json!({"name": name, "required": required}));
        }
        self
    }

    /// Any other field, verbatim.
    pub fn field(mut self, key: &str, value: Value) -> Self {
        set(&mut self.0, key, value);
        self
    }

    /// Its `name`.
    pub fn name(&self) -> String {
        string(&self.0, "name")
    }

    /// The definition `prompts/list` shows.
    pub fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }
}
