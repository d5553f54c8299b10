"""langchain-mcp-adapters: `MultiServerMCPClient` handed the pytest
plugin's `mcp_cassette`, tools run by a LangChain agent (`create_agent`)
on a scripted chat model (no LLM).

By default the client opens a new session, so a new server process, for
`get_tools()` and for every tool call; `client.session(name)` keeps one."""

from fwmodels import scripted_chat_model, tool_messages
from fwservers import MEMORY_SERVER, NODE, NOTES_SERVER, PYTHON

# docs: langchain langchain-session
import pytest
from langchain.agents import create_agent
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools

pytestmark = pytest.mark.anyio  # async tests, on anyio's pytest plugin
# end docs


# docs: langchain
async def test_session_per_call(mcp_cassette, transcript):
    server = mcp_cassette.stdio(PYTHON, [NOTES_SERVER])
    client = MultiServerMCPClient({
        "notes": {"transport": "stdio", "command": server.command, "args": server.args},
    })
    tools = await client.get_tools()  # one server process here, one more per tool call
    model = scripted_chat_model([("add_note", {"text": "buy milk"})], [("list_notes", {})])
    agent = create_agent(model, tools)
    result = await agent.ainvoke({"messages": [("user", "Take notes")]})
    transcript.add(*tool_messages(result["messages"]))
    # Each call had a process of its own: the note is gone by list_notes.
    assert transcript == [["add_note", "note 1: buy milk"], ["list_notes", "(no notes)"]], transcript
# end docs


# docs: langchain-session
async def test_one_session(mcp_cassette, transcript):
    server = mcp_cassette.stdio(PYTHON, [NOTES_SERVER])
    client = MultiServerMCPClient({
        "notes": {"transport": "stdio", "command": server.command, "args": server.args},
    })
    async with client.session("notes") as session:  # one server process
        tools = await load_mcp_tools(session)
        model = scripted_chat_model([("add_note", {"text": "buy milk"})], [("list_notes", {}), ("shout", {"message": "hi"})])
        agent = create_agent(model, tools)
        result = await agent.ainvoke({"messages": [("user", "Take notes")]})
    transcript.add(*tool_messages(result["messages"]))
    assert ["list_notes", "1. buy milk"] in transcript, transcript
# end docs


async def test_server_killed_on_close(mcp_cassette, transcript):
    """A server that ignores SIGTERM and lingers after stdin closes: on
    close the `mcp` 1.x client closes stdin, sends SIGTERM to the process
    group after 2 s (mcpcassette passes it on and waits for its server) and
    SIGKILL 2 s later, which kills mcpcassette in the middle."""
    server = mcp_cassette.stdio(PYTHON, [NOTES_SERVER, "--stubborn"])
    client = MultiServerMCPClient({
        "notes": {"transport": "stdio", "command": server.command, "args": server.args},
    })
    async with client.session("notes") as session:
        tools = await load_mcp_tools(session)
        model = scripted_chat_model([("add_note", {"text": "killed"})], [("list_notes", {})])
        result = await create_agent(model, tools).ainvoke({"messages": [("user", "Take notes")]})
    transcript.add(*tool_messages(result["messages"]))
    assert ["list_notes", "1. killed"] in transcript, transcript


async def test_memory_state_across_processes(mcp_cassette, transcript, tmp_path):
    """server-memory keeps its graph in a file: what one process created, a
    later process reads back."""
    server = mcp_cassette.stdio(NODE, [MEMORY_SERVER], env={"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")})
    client = MultiServerMCPClient({
        "memory": {"transport": "stdio", "command": server.command, "args": server.args, "env": server.env},
    })
    tools = await client.get_tools()
    entity = {"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}
    model = scripted_chat_model([("create_entities", {"entities": [entity]})], [("read_graph", {})])
    result = await create_agent(model, tools).ainvoke({"messages": [("user", "Remember Ada")]})
    transcript.add(*tool_messages(result["messages"]))
    assert "wrote the first program" in transcript[-1][1], transcript


async def test_two_servers(mcp_cassette, transcript, tmp_path):
    notes = mcp_cassette.stdio(PYTHON, [NOTES_SERVER])
    memory = mcp_cassette.stdio(NODE, [MEMORY_SERVER], env={"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")})
    client = MultiServerMCPClient({
        "notes": {"transport": "stdio", "command": notes.command, "args": notes.args},
        "memory": {"transport": "stdio", "command": memory.command, "args": memory.args, "env": memory.env},
    })
    async with client.session("notes") as n, client.session("memory") as m:
        tools = await load_mcp_tools(n) + await load_mcp_tools(m)
        model = scripted_chat_model([("shout", {"message": "two"}), ("read_graph", {})])
        result = await create_agent(model, tools).ainvoke({"messages": [("user", "go")]})
    transcript.add(*tool_messages(result["messages"]))
    assert ["shout", "TWO"] in transcript, transcript
