"""pydantic-ai 2.x (`pydantic-ai-slim[mcp]`): `MCPToolset` on the fastmcp
client, driven by `FunctionModel` (a scripted model) and `TestModel` (which
calls every tool at once), with the pytest plugin's `mcp_cassette`."""

from pydantic_ai.messages import ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.test import TestModel

from fwservers import COUNTER_SERVER, NODE, NOTES_SERVER, PYTHON

# docs: pydantic-ai-2 pydantic-ai-2-two-servers
import pytest
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset

pytestmark = pytest.mark.anyio  # async tests, on anyio's pytest plugin
# end docs


def scripted(*steps):
    """A model that asks for each step's tool calls in turn, then answers "done"."""
    steps = list(steps)

    def respond(messages, info):
        if steps:
            return ModelResponse(parts=[ToolCallPart(name, args) for name, args in steps.pop(0)])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(respond)


def tool_results(result):
    """(tool, what it returned) for each tool result the agent got, in order."""
    return [
        [part.tool_name, part.content if isinstance(part, ToolReturnPart) else f"retry: {part.content}"]
        for message in result.all_messages()
        for part in message.parts
        if isinstance(part, (ToolReturnPart, RetryPromptPart))
    ]


# docs: pydantic-ai-2
async def test_function_model_one_server(mcp_cassette, transcript):
    server = mcp_cassette.stdio(PYTHON, [NOTES_SERVER])
    toolset = MCPToolset(server.fastmcp_transport())
    model = scripted(
        [("add_note", {"text": "buy milk"})],
        [("add_note", {"text": "call mom"})],
        [("list_notes", {}), ("shout", {"message": "hello"})],
    )
    agent = Agent(model, toolsets=[toolset])
    async with agent:  # one server process for every run inside
        result = await agent.run("Take notes")
    transcript.add(*tool_results(result))
    assert transcript[-2:] == [["list_notes", "1. buy milk\n2. call mom"], ["shout", "HELLO"]]
# end docs


async def test_test_model_calls_tools_concurrently(mcp_cassette, transcript):
    server = mcp_cassette.stdio(PYTHON, [NOTES_SERVER])
    agent = Agent(TestModel(call_tools=["slow_square", "slow_cube", "shout"]), toolsets=[MCPToolset(server.fastmcp_transport())])
    async with agent:
        result = await agent.run("Compute")
    transcript.add(*tool_results(result))
    assert sorted(name for name, _ in transcript) == ["shout", "slow_cube", "slow_square"], transcript


# docs: pydantic-ai-2-two-servers
async def test_two_servers(mcp_cassette, transcript):
    notes = mcp_cassette.stdio(PYTHON, [NOTES_SERVER], name="notes")  # cassette <test>.notes.json
    counter = mcp_cassette.stdio(NODE, [COUNTER_SERVER], name="counter")  # <test>.counter.json
    model = scripted(
        [("add_note", {"text": "count twice"}), ("increment", {"by": 2})],
        [("increment", {"by": 3}), ("list_notes", {})],
    )
    agent = Agent(model, toolsets=[MCPToolset(notes.fastmcp_transport()), MCPToolset(counter.fastmcp_transport())])
    async with agent:
        result = await agent.run("Count")
    transcript.add(*tool_results(result))
    assert ["increment", "count is 5"] in transcript, transcript
# end docs


async def test_runs_outside_the_agent_context(mcp_cassette, transcript):
    """Without `async with agent`, each run starts the server anew."""
    server = mcp_cassette.stdio(PYTHON, [NOTES_SERVER])
    agent = Agent(scripted([("add_note", {"text": "first run"})]), toolsets=[MCPToolset(server.fastmcp_transport())])
    transcript.add(*tool_results(await agent.run("one")))
    agent = Agent(scripted([("add_note", {"text": "second run"}), ("list_notes", {})]), toolsets=[MCPToolset(server.fastmcp_transport())])
    transcript.add(*tool_results(await agent.run("two")))


async def test_http(mcp_cassette, transcript, notes_http):
    server = mcp_cassette.http(notes_http)
    model = scripted([("add_note", {"text": "over http"})], [("list_notes", {}), ("shout", {"message": "hi"})])
    agent = Agent(model, toolsets=[MCPToolset(server.url)])
    async with agent:
        result = await agent.run("Take notes")
    transcript.add(*tool_results(result))
    assert ["list_notes", "1. over http"] in transcript, transcript
