"""pydantic-ai 1.x: `MCPServerStdio` and `MCPServerStreamableHTTP` (on the
`mcp` 1.x SDK) handed the pytest plugin's `mcp_cassette`. On close this
client stops the server's process group (see test_server_slow_to_exit)."""

from pydantic_ai.messages import ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.test import TestModel

from fwservers import COUNTER_SERVER, NODE, NOTES_SERVER, PYTHON

# docs: pydantic-ai-1 pydantic-ai-1-http
import pytest
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPServerStdio, MCPServerStreamableHTTP

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
    return [
        [part.tool_name, part.content if isinstance(part, ToolReturnPart) else f"retry: {part.content}"]
        for message in result.all_messages()
        for part in message.parts
        if isinstance(part, (ToolReturnPart, RetryPromptPart))
    ]


# docs: pydantic-ai-1
async def test_stdio(mcp_cassette, transcript):
    server = mcp_cassette.stdio(PYTHON, [NOTES_SERVER])
    notes = MCPServerStdio(server.command, server.args)
    model = scripted([("add_note", {"text": "buy milk"})], [("list_notes", {}), ("shout", {"message": "hi"})])
    agent = Agent(model, toolsets=[notes])
    async with agent:
        result = await agent.run("Take notes")
    transcript.add(*tool_results(result))
    assert ["list_notes", "1. buy milk"] in transcript, transcript
# end docs


async def test_server_slow_to_exit(mcp_cassette, transcript):
    """A server that ignores SIGTERM and lingers after stdin closes. On close
    the `mcp` 1.x client closes stdin, sends SIGTERM to the process group
    (mcpcassette and the server at once) after 2 s, and would SIGKILL it
    after 2 s more, but pydantic-ai stops waiting after 3 s and leaves the
    processes running."""
    server = mcp_cassette.stdio(PYTHON, [NOTES_SERVER, "--stubborn"])
    model = scripted([("add_note", {"text": "killed"})], [("list_notes", {})])
    agent = Agent(model, toolsets=[MCPServerStdio(server.command, server.args)])
    async with agent:
        result = await agent.run("Take notes")
    transcript.add(*tool_results(result))
    assert ["list_notes", "1. killed"] in transcript, transcript


async def test_test_model_concurrent_calls(mcp_cassette, transcript):
    server = mcp_cassette.stdio(PYTHON, [NOTES_SERVER])
    agent = Agent(TestModel(call_tools=["slow_square", "slow_cube", "shout"]), toolsets=[MCPServerStdio(server.command, server.args)])
    async with agent:
        result = await agent.run("Compute")
    transcript.add(*tool_results(result))
    assert sorted(name for name, _ in transcript) == ["shout", "slow_cube", "slow_square"], transcript


async def test_two_servers(mcp_cassette, transcript):
    notes = mcp_cassette.stdio(PYTHON, [NOTES_SERVER])
    counter = mcp_cassette.stdio(NODE, [COUNTER_SERVER])
    model = scripted([("add_note", {"text": "a"}), ("increment", {"by": 2})], [("get_count", {}), ("list_notes", {})])
    agent = Agent(model, toolsets=[MCPServerStdio(notes.command, notes.args), MCPServerStdio(counter.command, counter.args)])
    async with agent:
        result = await agent.run("Count")
    transcript.add(*tool_results(result))
    assert ["get_count", "count is 2"] in transcript, transcript


# docs: pydantic-ai-1-http
async def test_streamable_http(mcp_cassette, transcript, counter_http):
    server = mcp_cassette.http(counter_http)
    model = scripted([("increment", {"by": 5})], [("get_count", {}), ("echo", {"text": "hi"})])
    agent = Agent(model, toolsets=[MCPServerStreamableHTTP(server.url)])
    async with agent:
        result = await agent.run("Count")
    transcript.add(*tool_results(result))
    assert ["get_count", "count is 5"] in transcript, transcript
# end docs
