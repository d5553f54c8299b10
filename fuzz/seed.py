#!/usr/bin/env python3
"""Seed corpora for the fuzz targets from the shipped cassettes, the
schema corpus (tests/schema-corpus) and, when it is beside the
repository, the official schema examples (../shared/mcp-schema/*/examples).

Usage: fuzz/seed.py [CORPUS_DIR]   (default: fuzz/corpus)
Each target gets its own folder; files are named by content hash, so
running it again adds nothing twice.
"""

import base64
import hashlib
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "fuzz" / "corpus"


def put(target: str, data: bytes) -> None:
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def messages():
    """Every JSON-RPC message the seeds know."""
    for path in sorted((ROOT / "cassettes").glob("*.json")):
        cassette = json.loads(path.read_text())
        for interaction in cassette["interactions"]:
            for key in ("request", "notification", "response"):
                if key in interaction:
                    yield interaction[key]
            for event in interaction.get("during", []) + interaction.get("after", []):
                for key in ("notification", "server_request", "client_response"):
                    if key in event:
                        yield event[key]
    for path in sorted((ROOT / "tests/schema-corpus").glob("*.json")):
        for entry in json.loads(path.read_text())["entries"]:
            yield entry["message"]
    examples = ROOT.parent / "shared" / "mcp-schema"
    for path in sorted(examples.glob("*/examples/**/*.json")):
        try:
            value = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(value, dict) and "jsonrpc" in value:
            yield value


def main() -> None:
    all_messages = list(messages())
    for path in sorted((ROOT / "cassettes").glob("*.json")):
        put("loader", path.read_bytes())
    for path in sorted((ROOT / "tests/peers").rglob("*fixture*.json")):
        put("loader", path.read_bytes())
    all_messages = [m for m in all_messages if isinstance(m, dict)]
    for n, message in enumerate(all_messages):
        line = json.dumps(message, separators=(",", ":")).encode()
        put("wire", line)
        put("redactor", line)
        put("sse", bytes([1 + n % 7]) + b"id: 1\nevent: message\ndata: " + line + b"\n\n")
        params = message.get("params") if isinstance(message, dict) else None
        if params is not None:
            encoded = json.dumps(params).encode()
            put("matching", bytes([n % 251]) + encoded)
            put("miss_report", bytes([n % 251]) + encoded)
    # The miss report's long scalars (the first byte picks a tools/call
    # missed with a long string value, a long key, a long tool name): the
    # rest is repeated into it.
    for pick, unit in ((9, b"C"), (18, "é☃\"".encode()), (27, b"e")):
        put("miss_report", bytes([pick]) + unit)
    # A batch and a token-looking secret in a few encodings.
    put("wire", b"[" + b",".join(json.dumps(m).encode() for m in all_messages[:3]) + b"]")
    secret = b"ghp_" + b"a1B2" * 9
    put("redactor", b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"t":"' + secret + b'"}}')
    put("redactor", base64.b64encode(secret))
    print(f"seeded {CORPUS} from {len(all_messages)} messages")


if __name__ == "__main__":
    main()
