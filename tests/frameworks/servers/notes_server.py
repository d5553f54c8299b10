"""The fastmcp server of the framework matrix (tests/frameworks/).

Tools with state (``add_note`` / ``list_notes``: what one process holds, a
later process has lost), a tool that logs through the context (``shout``),
and two slow tools whose answers come back in the other order than they
were asked for when a client calls them concurrently (``slow_square``
sleeps longer than ``slow_cube``).

    python notes_server.py              # stdio
    python notes_server.py --stubborn   # stdio, and slow to die: ignores SIGTERM
                                        # and lingers 5 s after stdin closes, so a
                                        # client that closes it escalates (SIGTERM
                                        # after 2 s, SIGKILL 2 s later)
    python notes_server.py http PORT    # Streamable HTTP on 127.0.0.1:PORT/mcp
"""

import asyncio
import signal
import sys
import time

from fastmcp import Context, FastMCP

mcp = FastMCP("notes")
notes: list[str] = []


@mcp.tool
def add_note(text: str) -> str:
    """Save a note; returns its number."""
    notes.append(text)
    return f"note {len(notes)}: {text}"


@mcp.tool
def list_notes() -> str:
    """All notes this server process holds, one a line."""
    return "\n".join(f"{i}. {text}" for i, text in enumerate(notes, 1)) or "(no notes)"


@mcp.tool
async def shout(message: str, ctx: Context) -> str:
    """Upper-cases a message, logging it first."""
    await ctx.info(f"shouting {message!r}")
    return message.upper()


@mcp.tool
async def slow_square(x: int) -> str:
    """x * x, after 0.6 s."""
    await asyncio.sleep(0.6)
    return f"square({x}) = {x * x}"


@mcp.tool
async def slow_cube(x: int) -> str:
    """x * x * x, after 0.1 s."""
    await asyncio.sleep(0.1)
    return f"cube({x}) = {x * x * x}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False, log_level="warning")
    else:
        stubborn = "--stubborn" in sys.argv[1:]
        if stubborn:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        mcp.run(show_banner=False)
        if stubborn:
            time.sleep(5)
