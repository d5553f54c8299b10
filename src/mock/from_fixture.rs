//! Building a mock from a fixture file: its definitions listed verbatim, every
//! call answered by the fixture's own rules (cases, fallbacks, generated
//! results), so `mcpcassette serve` and a test's mock agree.

use std::sync::Arc;

use serde_json::Value;

use super::items::{Prompt, Resource, ResourceTemplate, Tool};
use super::server::{MockServer, Respond};
use crate::fixture::Fixture;

impl MockServer {
    /// A mock that serves `fixture`: its server info, instructions,
    /// protocol versions and capabilities; its tools, resources, templates
    /// and prompts, each answered as the fixture says; completions when any
    /// prompt or template offers them. Everything a mock adds (the call
    /// log, assertions, runtime changes, both eras) works as usual.
    pub fn from_fixture(fixture: Fixture) -> MockServer {
        let fixture = Arc::new(fixture);
        let versions = fixture.versions();
        let mut builder = MockServer::builder()
            .server_info_object(fixture.server_info())
            .protocol_versions(&versions)
            .capabilities(fixture.capabilities());
        if let Some(instructions) = &fixture.server.instructions {
            builder = builder.instructions(instructions);
        }
        for tool in &fixture.tools {
            let name = tool.name().unwrap_or_default().to_owned();
            let answers = Arc::clone(&fixture);
            let respond = Respond::with(move |arguments, _| answers.call_tool(&name, arguments));
            builder = builder.tool(Tool::from_definition(tool.definition.clone()), respond);
        }
        for resource in &fixture.resources {
            let definition = Resource::from_definition(resource.definition.clone());
            builder = builder.resource(definition, read(&fixture));
        }
        for template in &fixture.resource_templates {
            let definition = ResourceTemplate::from_definition(template.definition.clone());
            builder = builder.resource_template(definition, read(&fixture));
        }
        for prompt in &fixture.prompts {
            let name = prompt.name().unwrap_or_default().to_owned();
            let answers = Arc::clone(&fixture);
            let respond = Respond::with(move |arguments, _| answers.get_prompt(&name, arguments));
            builder = builder.prompt(Prompt::from_definition(prompt.definition.clone()), respond);
        }
        let completes = fixture.prompts.iter().any(|p| p.completions.is_some())
            || (fixture.resource_templates.iter()).any(|t| t.completions.is_some());
        if completes {
            let answers = Arc::clone(&fixture);
            builder = builder.completion(Respond::with(move |params, _| {
                let missing = Value::Null;
                let reference = params.get("ref").unwrap_or(&missing);
                let argument = params.get("argument").unwrap_or(&missing);
                answers.complete(reference, argument)
            }));
        }
        builder.build()
    }
}

/// `resources/read` as the fixture answers it.
fn read(fixture: &Arc<Fixture>) -> Respond {
    let answers = Arc::clone(fixture);
    Respond::with(move |params, _| {
        let uri = params
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or_default();
        answers.read_resource(uri)
    })
}
