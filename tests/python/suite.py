"""The test suite a user writes, as the plugin's tests run it: the
official `mcp` SDK client and fastmcp's client, each over stdio and
Streamable HTTP, against a server recorded and replayed by mcpcassette.

Read by test_plugin.py and written into each scratch project. Its
environment says which server to use: DEMO_SERVER (a stdio command),
HTTP_URL (a Streamable HTTP endpoint) and MESSAGE (what `echo` is asked).
"""

import os

import anyio
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

MESSAGE = os.environ.get("MESSAGE", "hello")


async def mcp_echo(streams_context):
    async with streams_context as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("echo", {"message": MESSAGE})
            return result.content[0].text


async def fastmcp_echo(transport):
    # The legacy handshake: what the example servers were recorded with.
    async with Client(transport, mode="legacy") as client:
        result = await client.call_tool("echo", {"message": MESSAGE})
        return result.content[0].text


def test_mcp_stdio(mcp_cassette):
    server = mcp_cassette.stdio(os.environ["DEMO_SERVER"])
    assert anyio.run(mcp_echo, stdio_client(server.parameters())) == f"echo: {MESSAGE}"


def test_mcp_http(mcp_cassette):
    proxy = mcp_cassette.http(os.environ["HTTP_URL"])
    assert anyio.run(mcp_echo, streamable_http_client(proxy.url)).endswith(MESSAGE)


def test_fastmcp_stdio(mcp_cassette):
    server = mcp_cassette.stdio(os.environ["DEMO_SERVER"])
    assert anyio.run(fastmcp_echo, server.fastmcp_transport()) == f"echo: {MESSAGE}"


def test_fastmcp_http(mcp_cassette):
    proxy = mcp_cassette.http(os.environ["HTTP_URL"])
    assert anyio.run(fastmcp_echo, StreamableHttpTransport(proxy.url)).endswith(MESSAGE)
