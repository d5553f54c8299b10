// @openai/agents (JavaScript): `MCPServerStdio` handed the Vitest helper's
// cassette, an agent run by `run()` on a scripted `Model` (no LLM). Built
// on the MCP TypeScript SDK 2.0 client, which probes `server/discover` in
// a process of its own before the session's process.
import { type Model, type ModelResponse, Usage } from "@openai/agents";
import { COUNTER_SERVER, NODE, NOTES_SERVER, PYTHON, transcript } from "./fw.js";
// docs: openai-agents-js
import { Agent, MCPServerStdio, run, setTracingDisabled } from "@openai/agents";
import { cassette } from "mcpcassette/vitest";
import { expect, it } from "vitest";

setTracingDisabled(true); // no traces sent anywhere
// end docs

type Call = [tool: string, input: Record<string, unknown>];

/** Asks for each step's tool calls in turn, then answers "done". */
function scriptedModel(...steps: Call[][]): Model {
  let turn = 0;
  return {
    async getResponse(): Promise<ModelResponse> {
      const calls = steps[turn++];
      const output: ModelResponse["output"] = calls
        ? calls.map(([name, input], i) => ({
            type: "function_call" as const,
            callId: `call_${turn}_${i}`,
            name,
            arguments: JSON.stringify(input),
            status: "completed" as const,
          }))
        : [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] }];
      return { usage: new Usage(), output };
    },
    // eslint-disable-next-line require-yield
    async *getStreamedResponse() {
      throw new Error("not streamed");
    },
  };
}

/** What each tool call returned to the agent, in order. */
function toolResults(result: { newItems: Array<{ type: string; rawItem?: unknown; output?: unknown }> }) {
  return result.newItems.filter((item) => item.type === "tool_call_output_item").map((item) => item.output);
}

// docs: openai-agents-js
it("runs an agent with a stdio server", async () => {
  const got = transcript();
  const counter = new MCPServerStdio(cassette.stdio({ command: NODE, args: [COUNTER_SERVER] }));
  await counter.connect();
  try {
    const model = scriptedModel([["increment", { by: 2 }]], [["get_count", {}], ["echo", { text: "hi" }]]);
    const agent = new Agent({ name: "counter", model, mcpServers: [counter] });
    const result = await run(agent, "Count");
    got.push(...toolResults(result));
  } finally {
    await counter.close();
  }
  expect(JSON.stringify(got)).toContain("count is 2");
});
// end docs

it("two servers in one test", async () => {
  const got = transcript();
  const counter = new MCPServerStdio(cassette.stdio({ command: NODE, args: [COUNTER_SERVER] }));
  const notes = new MCPServerStdio(cassette.stdio({ command: PYTHON, args: [NOTES_SERVER] }));
  await counter.connect();
  await notes.connect();
  try {
    const model = scriptedModel([["increment", { by: 6 }], ["add_note", { text: "six" }]], [["list_notes", {}]]);
    const agent = new Agent({ name: "both", model, mcpServers: [counter, notes] });
    got.push(...toolResults(await run(agent, "Count and note")));
  } finally {
    await counter.close();
    await notes.close();
  }
  expect(JSON.stringify(got)).toContain("1. six");
});
