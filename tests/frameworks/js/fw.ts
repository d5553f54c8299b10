// Shared by the framework tests: the servers (commands through the guard in
// ../bin, which .ci/frameworks.sh switches between starting the real
// interpreter and refusing), the transcript each test writes, and live HTTP
// servers (or, in CI, a tripwire).
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, onTestFinished } from "vitest";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export const NODE = path.join(root, "bin", "node");
export const PYTHON = path.join(root, "bin", "python");
/** fastmcp: add_note / list_notes (state), shout (logs via ctx), slow_square / slow_cube. */
export const NOTES_SERVER = path.join(root, "servers", "notes_server.py");
/** TypeScript SDK: increment / get_count (state), echo. */
export const COUNTER_SERVER = path.join(root, "servers", "counter_server.mjs");
/** @modelcontextprotocol/server-memory: a knowledge graph kept in MEMORY_FILE_PATH. */
export const MEMORY_SERVER = path.join(
  process.env.FW_NODE_MODULES ?? path.join(root, "..", "node_modules"),
  "@modelcontextprotocol/server-memory/dist/index.js",
);

const lines = (file: string) => {
  try {
    return fs.readFileSync(file, "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
};

/** What the agent got from its tools, in order; written when the test ends to $FW_TRANSCRIPTS. */
export function transcript(): unknown[] {
  const got: unknown[] = [];
  const starts = process.env.FW_STARTS;
  const before = starts ? lines(starts) : 0;
  const { currentTestName, testPath } = expect.getState();
  onTestFinished(() => {
    const out = process.env.FW_TRANSCRIPTS;
    if (!out) return;
    const test = `${path.basename(testPath ?? "")} > ${currentTestName}`;
    const name = test.replace(/[^A-Za-z0-9._-]+/g, "_");
    fs.mkdirSync(out, { recursive: true });
    const data: Record<string, unknown> = { test, results: got };
    if (starts) data.server_starts = lines(starts) - before;
    fs.writeFileSync(path.join(out, `${name}.json`), JSON.stringify(data, null, 1) + "\n");
  });
  return got;
}

/** Whether this is CI as mcpcassette reads it (the replay-only run). */
export function isCI(env = process.env): boolean {
  if (env.TF_BUILD !== undefined) return true;
  const ci = (env.CI ?? "").trim().toLowerCase();
  return env.CI !== undefined && !["", "0", "false"].includes(ci);
}

async function freePort(): Promise<number> {
  return await new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A live Streamable HTTP server (`command ...args http PORT`) until the test
 * ends; in CI, the URL of a tripwire that marks the run failed
 * ($FW_FORBIDDEN) when anything connects.
 */
export async function liveHttpServer(command: string, args: string[]): Promise<string> {
  if (isCI()) {
    const tripwire = net.createServer((socket) => {
      fs.appendFileSync(process.env.FW_FORBIDDEN ?? "/dev/null", `connection to the HTTP upstream during a replay-only run\n`);
      socket.destroy();
    });
    await new Promise<void>((resolve) => tripwire.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise<void>((resolve) => tripwire.close(() => resolve())));
    return `http://127.0.0.1:${(tripwire.address() as net.AddressInfo).port}/mcp`;
  }
  const port = await freePort();
  const child = spawn(command, [...args, "http", String(port)], { stdio: ["ignore", "ignore", "inherit"] });
  onTestFinished(async () => {
    child.kill("SIGTERM");
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.on("exit", resolve)));
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (up) return `http://127.0.0.1:${port}/mcp`;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${command} ${args.join(" ")} did not listen on ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
