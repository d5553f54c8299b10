"""mcp-use: `MCPClient.from_dict` with a Claude-Desktop-style `mcpServers`
entry built from the pytest plugin's `mcp_cassette`, the tools called
through an `MCPAgent` on a scripted chat model (no LLM) and through a
session."""

import os

os.environ.setdefault("MCP_USE_ANONYMIZED_TELEMETRY", "false")

from mcp_use import MCPAgent

from fwmodels import scripted_chat_model, tool_messages
from fwservers import COUNTER_SERVER, NODE, NOTES_SERVER, PYTHON

# docs: mcp-use
import pytest
from mcp_use import MCPClient

pytestmark = pytest.mark.anyio  # async tests, on anyio's pytest plugin
# end docs


# docs: mcp-use
async def test_session(mcp_cassette, transcript):
    server = mcp_cassette.stdio(PYTHON, [NOTES_SERVER])
    client = MCPClient.from_dict({"mcpServers": {"notes": {"command": server.command, "args": server.args}}})
    session = await client.create_session("notes")  # one server process
    try:
        for name, args in [("add_note", {"text": "buy milk"}), ("list_notes", {}), ("shout", {"message": "hi"})]:
            result = await session.call_tool(name, args)
            transcript.add([name, [block.text for block in result.content]])
    finally:
        await client.close_all_sessions()
    assert ["list_notes", ["1. buy milk"]] in transcript, transcript
# end docs


async def test_agent_two_servers(mcp_cassette, transcript):
    notes = mcp_cassette.stdio(PYTHON, [NOTES_SERVER])
    counter = mcp_cassette.stdio(NODE, [COUNTER_SERVER])
    client = MCPClient.from_dict({"mcpServers": {
        "notes": {"command": notes.command, "args": notes.args},
        "counter": {"command": counter.command, "args": counter.args},
    }})
    model = scripted_chat_model([("add_note", {"text": "x"})], [("increment", {"by": 7})], [("get_count", {})])
    agent = MCPAgent(llm=model, client=client, max_steps=20)
    try:
        await agent.run("go")
        history = agent.get_conversation_history()
    finally:
        await agent.close()
    transcript.add(*tool_messages(history))
    assert ["get_count", "count is 7"] in transcript, transcript
