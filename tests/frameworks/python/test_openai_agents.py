"""openai-agents: `agents.mcp.MCPServerStdio` and `MCPServerStreamableHttp`
handed the pytest plugin's `mcp_cassette`, an agent driven through
`Runner.run` by a scripted `Model` (no LLM)."""

import json

from agents import ModelResponse, Usage
from agents.items import ToolCallOutputItem
from agents.models.interface import Model
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from fwservers import COUNTER_SERVER, NODE, NOTES_SERVER, PYTHON

# docs: openai-agents openai-agents-http
import pytest
from agents import Agent, Runner, set_tracing_disabled
# end docs
# docs: openai-agents
from agents.mcp import MCPServerStdio
# end docs
# docs: openai-agents-http
from agents.mcp import MCPServerStreamableHttp
# end docs
# docs: openai-agents openai-agents-http

pytestmark = pytest.mark.anyio  # async tests, on anyio's pytest plugin
set_tracing_disabled(True)  # no traces sent anywhere
# end docs


class ScriptedModel(Model):
    """Asks for each step's tool calls in turn, then answers "done"."""

    def __init__(self, *steps):
        self.steps = list(steps)
        self.turn = 0

    async def get_response(self, *args, **kwargs):
        self.turn += 1
        if self.steps:
            output = [
                ResponseFunctionToolCall(
                    type="function_call", call_id=f"call_{self.turn}_{i}", name=name, arguments=json.dumps(arguments)
                )
                for i, (name, arguments) in enumerate(self.steps.pop(0))
            ]
        else:
            text = ResponseOutputText(type="output_text", text="done", annotations=[])
            output = [ResponseOutputMessage(id="msg", type="message", role="assistant", status="completed", content=[text])]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


def tool_results(result):
    """What each tool call returned to the agent, in order."""
    return [item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)]


# docs: openai-agents
async def test_stdio(mcp_cassette, transcript):
    server = mcp_cassette.stdio(PYTHON, [NOTES_SERVER])
    async with MCPServerStdio(params={"command": server.command, "args": server.args}) as notes:
        model = ScriptedModel([("add_note", {"text": "buy milk"})], [("list_notes", {}), ("shout", {"message": "hey"})])
        agent = Agent(name="notes", model=model, mcp_servers=[notes])
        result = await Runner.run(agent, "Take notes")
    transcript.add(*tool_results(result))
    assert "1. buy milk" in str(transcript), transcript
# end docs


async def test_two_runs_two_servers(mcp_cassette, transcript):
    """Two servers, two runs (the agent lists the tools again on each)."""
    notes = mcp_cassette.stdio(PYTHON, [NOTES_SERVER])
    counter = mcp_cassette.stdio(NODE, [COUNTER_SERVER])
    async with MCPServerStdio(params={"command": notes.command, "args": notes.args}) as n, \
            MCPServerStdio(params={"command": counter.command, "args": counter.args}) as c:
        agent = Agent(name="a", model=ScriptedModel([("add_note", {"text": "x"}), ("increment", {"by": 4})]), mcp_servers=[n, c])
        transcript.add(*tool_results(await Runner.run(agent, "one")))
        agent = Agent(name="a", model=ScriptedModel([("get_count", {}), ("list_notes", {})]), mcp_servers=[n, c])
        transcript.add(*tool_results(await Runner.run(agent, "two")))
    assert "count is 4" in str(transcript), transcript


# docs: openai-agents-http
async def test_streamable_http(mcp_cassette, transcript, notes_http):
    server = mcp_cassette.http(notes_http)
    async with MCPServerStreamableHttp(params={"url": server.url}) as notes:
        model = ScriptedModel([("add_note", {"text": "over http"})], [("list_notes", {})])
        agent = Agent(name="notes", model=model, mcp_servers=[notes])
        result = await Runner.run(agent, "Take notes")
    transcript.add(*tool_results(result))
    assert "1. over http" in str(transcript), transcript
# end docs
