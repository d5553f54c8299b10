"""The servers of the framework matrix, as the tests hand them to
``mcp_cassette``: each is a command and its arguments.

``PYTHON`` and ``NODE`` are ../bin/python and ../bin/node, the guard that
.ci/frameworks.sh switches: it starts the real interpreter in the live and
recording runs, and refuses (and leaves a mark) in the replay run.
"""

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

PYTHON = str(ROOT / "bin" / "python")
NODE = str(ROOT / "bin" / "node")

#: fastmcp: add_note / list_notes (state), shout (logs via ctx), slow_square / slow_cube.
NOTES_SERVER = str(ROOT / "servers" / "notes_server.py")
#: TypeScript SDK: increment / get_count (state), echo.
COUNTER_SERVER = str(ROOT / "servers" / "counter_server.mjs")
#: @modelcontextprotocol/server-memory: a knowledge graph kept in MEMORY_FILE_PATH.
MEMORY_SERVER = str(Path(os.environ.get("FW_NODE_MODULES", ROOT.parent / "node_modules"))
                    / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js")
