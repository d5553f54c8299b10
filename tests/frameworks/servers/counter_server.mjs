// The TypeScript SDK server of the framework matrix (tests/frameworks/):
// a counter whose state lives as long as the process, and an echo.
//
//   node counter_server.mjs            # stdio
//   node counter_server.mjs http PORT  # Streamable HTTP on 127.0.0.1:PORT/mcp
//
// Built on the low-level `Server` of @modelcontextprotocol/sdk (1.x), so it
// needs nothing else; the SDK is resolved from this file's folder upwards
// (.ci/frameworks.sh copies it beside the pinned node_modules).
import http from "node:http";
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

let count = 0;

const tools = [
  {
    name: "increment",
    description: "Adds `by` to the counter and returns the new count.",
    inputSchema: { type: "object", properties: { by: { type: "number" } }, required: ["by"] },
  },
  {
    name: "get_count",
    description: "The counter's value.",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "echo",
    description: "Echoes `text`.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
];

function newServer() {
  const server = new Server({ name: "counter", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const args = request.params.arguments ?? {};
    const text = (t) => ({ content: [{ type: "text", text: t }] });
    switch (request.params.name) {
      case "increment":
        count += Number(args.by ?? 1);
        return text(`count is ${count}`);
      case "get_count":
        return text(`count is ${count}`);
      case "echo":
        return text(`echo: ${args.text}`);
      default:
        return { isError: true, content: [{ type: "text", text: `no tool ${request.params.name}` }] };
    }
  });
  return server;
}

if (process.argv[2] === "http") {
  const port = Number(process.argv[3] ?? 0);
  const sessions = new Map();
  const httpServer = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = id ? sessions.get(id) : undefined;
    if (!transport && req.method === "POST" && body && !Array.isArray(body) && isInitializeRequest(body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    if (!transport) {
      res.writeHead(id ? 404 : 400, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "no session" } }));
      return;
    }
    await transport.handleRequest(req, res, body);
  });
  httpServer.listen(port, "127.0.0.1", () => {
    console.log(`http://127.0.0.1:${httpServer.address().port}/mcp`);
  });
} else {
  await newServer().connect(new StdioServerTransport());
}
