// Mastra: `MCPClient` from @mastra/mcp with server definitions from the
// Vitest helper's cassette, its tools run by a Mastra `Agent` on the AI
// SDK's mock model (no LLM). Built on the MCP TypeScript SDK 2.0 client,
// which probes `server/discover` in a process of its own before the
// session's process.
import { MockLanguageModelV4 } from "ai/test";
import { COUNTER_SERVER, NODE, NOTES_SERVER, PYTHON, liveHttpServer, transcript } from "./fw.js";
// docs: mastra mastra-two-servers mastra-http
import { Agent } from "@mastra/core/agent";
import { MCPClient } from "@mastra/mcp";
import { cassette } from "mcpcassette/vitest";
import { expect, it } from "vitest";
// end docs

type Call = [tool: string, input: Record<string, unknown>];

/** The mock model asks for each step's tool calls in turn, then answers "done". */
function scriptedModel(...steps: Call[][]) {
  const usage = {
    inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 0, text: 0, reasoning: 0 },
  };
  let turn = 0;
  return new MockLanguageModelV4({
    doGenerate: async () => {
      const calls = steps[turn++];
      if (!calls) {
        return { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
      }
      return {
        content: calls.map(([toolName, input], i) => ({
          type: "tool-call" as const,
          toolCallId: `call_${turn}_${i}`,
          toolName,
          input: JSON.stringify(input),
        })),
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    },
  });
}

function toolResults(result: { steps: Array<{ toolResults: Array<{ payload?: { toolName: string; result: unknown }; toolName?: string; output?: unknown }> }> }) {
  return result.steps.flatMap((step) =>
    step.toolResults.map((r) => (r.payload ? [r.payload.toolName, r.payload.result] : [r.toolName, r.output])),
  );
}

// docs: mastra
it("runs an agent with a stdio server", async () => {
  const got = transcript();
  const mcp = new MCPClient({
    servers: { counter: cassette.stdio({ command: NODE, args: [COUNTER_SERVER] }) },
  });
  try {
    const model = scriptedModel([["counter_increment", { by: 2 }]], [["counter_get_count", {}]]);
    const agent = new Agent({ id: "counter", name: "counter", instructions: "Count.", model, tools: await mcp.listTools() });
    const result = await agent.generate("Count");
    got.push(...toolResults(result));
  } finally {
    await mcp.disconnect();
  }
  expect(JSON.stringify(got)).toContain("count is 2");
});
// end docs

// docs: mastra-two-servers
it("two servers in one test", async () => {
  const got = transcript();
  const mcp = new MCPClient({
    servers: {
      // cassettes <test>.counter.json and <test>.notes.json
      counter: cassette.stdio({ command: NODE, args: [COUNTER_SERVER], name: "counter" }),
      notes: cassette.stdio({ command: PYTHON, args: [NOTES_SERVER], name: "notes" }),
    },
  });
  try {
    const model = scriptedModel([["counter_increment", { by: 8 }], ["notes_add_note", { text: "eight" }]], [["notes_list_notes", {}]]);
    const agent = new Agent({ id: "both", name: "both", instructions: "Count and note.", model, tools: await mcp.listTools() });
    got.push(...toolResults(await agent.generate("Go")));
  } finally {
    await mcp.disconnect();
  }
  expect(JSON.stringify(got)).toContain("1. eight");
});
// end docs

// docs: mastra-http
it("runs an agent with a Streamable HTTP server", async () => {
  const got = transcript();
  const server = await cassette.http(await liveHttpServer(NODE, [COUNTER_SERVER]));
  const mcp = new MCPClient({ servers: { counter: { url: new URL(server.url) } } });
  try {
    const model = scriptedModel([["counter_increment", { by: 3 }]], [["counter_get_count", {}]]);
    const agent = new Agent({ id: "http", name: "http", instructions: "Count.", model, tools: await mcp.listTools() });
    got.push(...toolResults(await agent.generate("Count")));
  } finally {
    await mcp.disconnect();
  }
  expect(JSON.stringify(got)).toContain("count is 3");
});
// end docs
