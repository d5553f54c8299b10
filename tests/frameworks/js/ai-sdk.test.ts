// The AI SDK (`ai` + `@ai-sdk/mcp`): `createMCPClient` over stdio
// (`StdioMCPTransport`) and HTTP, handed the Vitest helper's cassette;
// `generateText` driven by the SDK's own mock model (`ai/test`), no LLM.
import { MockLanguageModelV4 } from "ai/test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { COUNTER_SERVER, MEMORY_SERVER, NODE, liveHttpServer, transcript } from "./fw.js";
// docs: ai-sdk ai-sdk-http
import { createMCPClient } from "@ai-sdk/mcp";
// end docs
// docs: ai-sdk
import { StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
// end docs
// docs: ai-sdk ai-sdk-http
import { generateText, isStepCount } from "ai";
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

/** [tool, what it returned] for every tool result of every step. */
function toolResults(result: { steps: Array<{ toolResults: Array<{ toolName: string; output: unknown }> }> }) {
  return result.steps.flatMap((step) => step.toolResults.map((r) => [r.toolName, r.output]));
}

// docs: ai-sdk
it("calls the tools of a stdio server", async () => {
  const got = transcript();
  const client = await createMCPClient({
    transport: new StdioMCPTransport(cassette.stdio({ command: NODE, args: [COUNTER_SERVER] })),
  });
  try {
    const result = await generateText({
      model: scriptedModel([["increment", { by: 2 }]], [["increment", { by: 3 }], ["echo", { text: "hi" }]]),
      tools: await client.tools(),
      prompt: "Count to five",
      stopWhen: isStepCount(5),
    });
    got.push(...toolResults(result));
  } finally {
    await client.close();
  }
  expect(JSON.stringify(got)).toContain("count is 5");
});
// end docs

// docs: ai-sdk-http
it("calls the tools of a Streamable HTTP server", async () => {
  const got = transcript();
  const server = await cassette.http(await liveHttpServer(NODE, [COUNTER_SERVER]));
  const client = await createMCPClient({ transport: { type: "http", url: server.url } });
  try {
    const result = await generateText({
      model: scriptedModel([["increment", { by: 4 }]], [["get_count", {}]]),
      tools: await client.tools(),
      prompt: "Count",
      stopWhen: isStepCount(5),
    });
    got.push(...toolResults(result));
  } finally {
    await client.close();
  }
  expect(JSON.stringify(got)).toContain("count is 4");
});
// end docs

it("two servers in one test", async () => {
  const got = transcript();
  const memoryFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "fw-memory-")), "memory.jsonl");
  const counter = await createMCPClient({
    transport: new StdioMCPTransport(cassette.stdio({ command: NODE, args: [COUNTER_SERVER] })),
  });
  const memory = await createMCPClient({
    transport: new StdioMCPTransport(
      cassette.stdio({ command: NODE, args: [MEMORY_SERVER], env: { MEMORY_FILE_PATH: memoryFile } }),
    ),
  });
  try {
    const entity = { name: "Counter", entityType: "device", observations: ["counts by three"] };
    const result = await generateText({
      model: scriptedModel([["increment", { by: 3 }], ["create_entities", { entities: [entity] }]], [["read_graph", {}]]),
      tools: { ...(await counter.tools()), ...(await memory.tools()) },
      prompt: "Count and remember",
      stopWhen: isStepCount(5),
    });
    got.push(...toolResults(result));
  } finally {
    await counter.close();
    await memory.close();
  }
  expect(JSON.stringify(got)).toContain("counts by three");
});

it("server-memory: what one process created, a later one reads back", async () => {
  const got = transcript();
  const memoryFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "fw-memory-")), "memory.jsonl");
  // One server definition, two clients one after the other: two processes.
  const memoryServer = cassette.stdio({ command: NODE, args: [MEMORY_SERVER], env: { MEMORY_FILE_PATH: memoryFile } });
  const entity = { name: "Ada", entityType: "person", observations: ["wrote the first program"] };
  for (const step of [[["create_entities", { entities: [entity] }]], [["read_graph", {}]]] as Call[][]) {
    const client = await createMCPClient({ transport: new StdioMCPTransport(memoryServer) });
    try {
      const result = await generateText({
        model: scriptedModel(step),
        tools: await client.tools(),
        prompt: "Remember",
        stopWhen: isStepCount(3),
      });
      got.push(...toolResults(result));
    } finally {
      await client.close();
    }
  }
  expect(JSON.stringify(got.at(-1))).toContain("wrote the first program");
});
