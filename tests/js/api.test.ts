// The installed package's API and CLI, with the official TypeScript SDK
// client and the example servers (MCPCASSETTE_DEMO_SERVER,
// MCPCASSETTE_HTTP_SERVER; .ci/js.sh sets them).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import * as mc from "mcpcassette";
import { cassette, sanitizeTestName, testFileStem } from "mcpcassette/vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const here = path.dirname(fileURLToPath(import.meta.url));
const demoServer = requiredEnv("MCPCASSETTE_DEMO_SERVER");
const httpServer = requiredEnv("MCPCASSETTE_HTTP_SERVER");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mcpcassette-api-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (run the suite through .ci/js.sh)`);
  return value;
}

async function echo(params: ReturnType<typeof mc.stdio>, message: string) {
  const client = new Client({ name: "api-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ ...params, stderr: "pipe" }));
  try {
    return await client.callTool({ name: "echo", arguments: { message } });
  } finally {
    await client.close();
  }
}

describe("the installed package", () => {
  it("comes from the packed tarballs, not the source tree", () => {
    const require = createRequire(import.meta.url);
    expect(fs.realpathSync(require.resolve("mcpcassette"))).toBe(path.join(here, "node_modules/mcpcassette/index.js"));
    const binary = mc.binaryPath();
    expect(fs.realpathSync(binary)).toBe(path.join(here, "node_modules/@mcpcassette/linux-x64/bin/mcpcassette"));
    fs.accessSync(binary, fs.constants.X_OK);
    expect(process.env.MCPCASSETTE_BIN).toBeUndefined();
  });

  it("maps every platform to its package, and names it when it is missing", () => {
    expect(mc.platformPackage("linux", "x64")).toBe("@mcpcassette/linux-x64");
    expect(mc.platformPackage("darwin", "arm64")).toBe("@mcpcassette/darwin-arm64");
    expect(mc.platformPackage("win32", "x64")).toBe("@mcpcassette/win32-x64");
    expect(mc.binaryName("win32")).toBe("mcpcassette.exe");
    expect(() => mc.binaryPath({ platform: "darwin", arch: "arm64", env: {} })).toThrow(
      /darwin-arm64.*@mcpcassette\/darwin-arm64/,
    );
  });

  it("takes MCPCASSETTE_BIN first, and says when it does not exist", () => {
    const real = mc.binaryPath();
    expect(mc.binaryPath({ env: { MCPCASSETTE_BIN: real }, platform: "darwin", arch: "arm64" })).toBe(real);
    expect(() => mc.binaryPath({ env: { MCPCASSETTE_BIN: "/nonexistent/mcpcassette" } })).toThrow(
      "MCPCASSETTE_BIN is set to /nonexistent/mcpcassette, which does not exist",
    );
  });

  it("resolves the mode as mcpcassette does: option, MCPCASSETTE_MODE, then CI", () => {
    expect(mc.resolveMode({ env: {} })).toBe("once");
    for (const ci of ["true", "1", "yes", "TRUE"]) expect(mc.resolveMode({ env: { CI: ci } })).toBe("none");
    for (const ci of ["", "0", "false", "False"]) expect(mc.resolveMode({ env: { CI: ci } })).toBe("once");
    expect(mc.resolveMode({ env: { TF_BUILD: "True" } })).toBe("none");
    expect(mc.resolveMode({ env: { CI: "true", MCPCASSETTE_MODE: "all" } })).toBe("all");
    expect(mc.resolveMode({ mode: "new-episodes", env: { MCPCASSETTE_MODE: "all" } })).toBe("new-episodes");
    expect(mc.resolveMode({ mode: "auto", env: { CI: "true" } })).toBe("none");
    expect(() => mc.resolveMode({ env: { MCPCASSETTE_MODE: "sometimes" } })).toThrow(
      /unknown mode "sometimes" \(from MCPCASSETTE_MODE\)/,
    );
  });
});

describe("stdio(), readReport() and failureMessage()", () => {
  const cassettePath = path.join(tmp, "core", "echo.json");

  it("builds the transport parameters and records in mode once", async () => {
    const params = mc.stdio({ command: demoServer, args: [], cassette: cassettePath, mode: "once", extraArgs: ["--strategy", "keyed"] });
    expect(params.command).toBe(mc.binaryPath());
    expect(params.args).toEqual([
      "run", "--mode", "once", "--cassette", cassettePath, "--scope", params.scopeDir,
      "--strategy", "keyed", "--", demoServer,
    ]);
    expect("env" in params).toBe(false);
    expect(mc.stdio({ command: "x", cassette: cassettePath, mode: "once", env: { A: "1" } }).env).toEqual({ A: "1" });

    const result = await echo(params, "hello");
    expect(result.content).toEqual([{ type: "text", text: "echo: hello" }]);
    const report = await mc.readReport(params.reportPath);
    expect(report).toMatchObject({ finished: true, recorded: true, mode: "once" });
    expect(mc.failureMessage(report)).toBeNull();
    expect(JSON.parse(fs.readFileSync(cassettePath, "utf8")).interactions.length).toBeGreaterThan(0);
  });

  it("replays in mode none without the server", async () => {
    const params = mc.stdio({ command: "/nonexistent/demo_server", cassette: cassettePath, mode: "none" });
    const result = await echo(params, "hello");
    expect(result.content).toEqual([{ type: "text", text: "echo: hello" }]);
    const report = await mc.readReport(params.reportPath);
    expect(report).toMatchObject({ finished: true, exit_code: 0, mode: "none", misses: [] });
    expect(mc.failureMessage(report)).toBeNull();
  });

  it("turns a miss into a message with the full miss report", async () => {
    const params = mc.stdio({ command: "/nonexistent/demo_server", cassette: cassettePath, mode: "none" });
    await expect(echo(params, "changed")).rejects.toThrow(/-32000/);
    const report = await mc.readReport(params.reportPath);
    expect(report?.exit_code).toBe(1);
    const message = mc.failureMessage(report);
    expect(message).toContain("1 request(s) had no recorded answer");
    expect(message).toContain("no recorded interaction matches this request");
    expect(message).toContain("Closest recorded requests:");
    expect(message).toContain('+    "message": "changed"');
    expect(message).toBe(mc.failureMessage(report)); // pure
    expect(() => mc.assertReport(report)).toThrow("no recorded interaction matches this request");
  });

  it("fails at once in mode none when the cassette is missing, starting nothing", () => {
    const missing = path.join(tmp, "core", "missing.json");
    const reportPath = path.join(tmp, "core", "missing-report.json");
    expect(() => mc.stdio({ command: demoServer, cassette: missing, mode: "none", reportPath })).toThrow(
      `mode none replays only, and the cassette ${missing} does not exist`,
    );
    expect(fs.existsSync(reportPath)).toBe(false);
  });

  it("readReport: null when never started; waits for the final report", async () => {
    expect(await mc.readReport(path.join(tmp, "never.json"))).toBeNull();
    const reportPath = path.join(tmp, "slow.json");
    fs.writeFileSync(reportPath, JSON.stringify({ cassette: "c.json", mode: "none", finished: false }));
    setTimeout(() => fs.writeFileSync(reportPath, JSON.stringify({ cassette: "c.json", mode: "none", finished: true, exit_code: 2, error: "boom" })), 300);
    const report = await mc.readReport(reportPath, { timeoutMs: 5000 });
    expect(report).toMatchObject({ finished: true, exit_code: 2 });
    expect(mc.failureMessage(report)).toContain("boom");
    fs.writeFileSync(reportPath, JSON.stringify({ cassette: "c.json", mode: "none", finished: false }));
    const unfinished = await mc.readReport(reportPath, { timeoutMs: 200 });
    expect(unfinished?.finished).toBe(false);
    expect(mc.failureMessage(unfinished)).toContain("close the client");
  });

  it("finishRun stops a run whose client was never closed, and gets its report", async () => {
    const params = mc.stdio({ command: "/nonexistent/demo_server", cassette: cassettePath, mode: "none" });
    const client = new Client({ name: "api-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ ...params, stderr: "pipe" }));
    await expect(client.callTool({ name: "echo", arguments: { message: "unclosed" } })).rejects.toThrow(/-32000/);
    expect((await mc.readReport(params.reportPath, { timeoutMs: 300 }))?.finished).toBe(false);
    const { report, stopped } = await mc.finishRun(params.reportPath, { graceMs: 200 });
    expect(stopped).toBe(true);
    expect(report).toMatchObject({ finished: true, exit_code: 1 });
    expect(mc.failureMessage(report)).toContain('+    "message": "unclosed"');
    await client.close();
  });

  it("failOnUnused: unused interactions fail the replay", async () => {
    const params = mc.stdio({ command: "/nonexistent/demo_server", cassette: cassettePath, mode: "none", failOnUnused: true });
    expect(params.args).toContain("--fail-on-unused");
    expect(params.args.indexOf("--fail-on-unused")).toBeLessThan(params.args.indexOf("--"));
    const client = new Client({ name: "api-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ ...params, stderr: "pipe" }));
    await client.close();
    const message = mc.failureMessage(await mc.readReport(params.reportPath));
    expect(message).toContain("--fail-on-unused");
    expect(message).toMatch(/#\d+ tools\/call \{"name":"echo","arguments":\{"message":"hello"\}\}/);
  });
});

describe("faults (the core API, as node:test uses it)", () => {
  const cassettePath = path.join(tmp, "core", "echo.json");

  it("stdio({faults}) passes them as --faults, replays misbehaving, and readFaults says what fired", async () => {
    const faults = [{ name: "echo", tool_error: "down for maintenance" }];
    const params = mc.stdio({ command: "/nonexistent/demo_server", cassette: cassettePath, mode: "none", faults });
    expect(params.args.slice(params.args.indexOf("--faults"), params.args.indexOf("--faults") + 2)).toEqual(["--faults", params.faultsPath]);
    expect(params.args.indexOf("--faults")).toBeLessThan(params.args.indexOf("--"));
    expect(JSON.parse(fs.readFileSync(params.faultsPath!, "utf8"))).toEqual(faults);
    const result = await echo(params, "hello");
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: "text", text: "down for maintenance" }]);
    const { report } = await mc.finishRun(params);
    expect(mc.failureMessage(report)).toBeNull();
    const fired = await mc.readFaults(params);
    expect(fired).toMatchObject({ fired: [{ fault: 0, kind: "tool_error", request: "tools/call echo" }], unused: [], hung: [], disconnected: null });
    expect(await mc.readFaults(report!)).toEqual(fired);
    expect(mc.stdio({ command: "x", cassette: cassettePath, mode: "none" }).faultsPath).toBeNull();
  });

  it("refuses faults at once when the run would record, and faults that are not a list", () => {
    const missing = path.join(tmp, "core", "never-recorded.json");
    const faults = [{ hang: true as const }];
    expect(() => mc.stdio({ command: demoServer, cassette: missing, mode: "once", faults })).toThrow(
      `faults are given, but the cassette ${missing} does not exist, so mode once would record it`,
    );
    expect(() => mc.stdio({ command: demoServer, cassette: cassettePath, mode: "all", faults })).toThrow(
      `faults are given, but mode all re-records ${cassettePath}`,
    );
    expect(() => mc.stdio({ command: demoServer, cassette: cassettePath, mode: "new-episodes", faults })).toThrow(
      "faults apply only when replaying",
    );
    expect(fs.existsSync(missing)).toBe(false);
    // @ts-expect-error: not a list of rules
    expect(() => mc.stdio({ command: demoServer, cassette: cassettePath, mode: "none", faults: "hang" })).toThrow(
      "faults must be a list of fault rules, or {seed, faults: [...]}",
    );
  });

  it("readFaults throws when the run had no faults", async () => {
    const params = mc.stdio({ command: "/nonexistent/demo_server", cassette: cassettePath, mode: "none" });
    await echo(params, "hello");
    await expect(mc.readFaults(params)).rejects.toThrow("had no faults");
  });
});

describe("http()", () => {
  const cassettePath = path.join(tmp, "http", "echo.json");
  let upstream: ReturnType<typeof spawn>;
  let upstreamUrl: string;

  beforeAll(async () => {
    upstream = spawn(httpServer, ["0"], { stdio: ["ignore", "pipe", "inherit"] });
    upstreamUrl = await firstLine(upstream);
    expect(upstreamUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });
  afterAll(() => {
    upstream?.kill("SIGTERM");
  });

  async function call(url: string, message: string) {
    const client = new Client({ name: "api-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      return await client.callTool({ name: "echo", arguments: { message } });
    } finally {
      await client.close();
    }
  }

  it("records through a proxy on 127.0.0.1, then replays without the upstream", async () => {
    const recorder = await mc.http({ upstream: upstreamUrl, cassette: cassettePath, mode: "once", stderr: "pipe" });
    expect(recorder.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect((await call(recorder.url, "hello")).content).toEqual([{ type: "text", text: "Echo: hello" }]);
    const recorded = await recorder.close();
    expect(recorded).toMatchObject({ finished: true, recorded: true });
    expect(recorder.process.exitCode).toBe(0);
    expect(fs.existsSync(cassettePath)).toBe(true);

    const replay = await mc.http({ cassette: cassettePath, mode: "none", stderr: "pipe" });
    expect((await call(replay.url, "hello")).content).toEqual([{ type: "text", text: "Echo: hello" }]);
    await expect(call(replay.url, "changed")).rejects.toThrow(/-32000/);
    const report = await replay.close();
    expect(report.exit_code).toBe(1);
    expect(mc.failureMessage(report)).toContain("no recorded interaction matches this request");
    expect(await replay.close()).toBe(report); // idempotent
  });

  it("http({faults}) replays misbehaving; readFaults stops it and says what fired", async () => {
    const replay = await mc.http({
      cassette: cassettePath,
      mode: "none",
      stderr: "pipe",
      faults: { seed: 1, faults: [{ name: "echo", http: { status: 503, retry_after: 1 } }] },
    });
    await expect(call(replay.url, "hello")).rejects.toThrow(/503/);
    const faults = await mc.readFaults(replay);
    expect(faults.fired.map((f) => f.kind)).toEqual(["http"]);
    expect(replay.process.exitCode).toBe(0);
    expect(mc.failureMessage(await replay.close())).toBeNull();
  });

  it("rejects with the reason when run cannot start", async () => {
    const bad = path.join(tmp, "http", "bad.json");
    fs.writeFileSync(bad, "{not json");
    await expect(mc.http({ cassette: bad, mode: "none", stderr: "pipe" })).rejects.toThrow(/before it listened.*bad\.json/s);
  });
});

describe("the CLI shim (node_modules/.bin/mcpcassette)", () => {
  const shim = path.join(here, "node_modules/.bin/mcpcassette");

  it("passes the arguments and the exit code through", () => {
    const version = spawnSync(shim, ["--version"], { encoding: "utf8" });
    expect(version.status).toBe(0);
    expect(version.stdout).toMatch(/^mcpcassette 0\.1\.0/);
    const missing = path.join(tmp, "no-such-cassette.json");
    const replay = spawnSync(shim, ["replay", missing], { encoding: "utf8", input: "" });
    expect(replay.status).toBe(2);
    expect(replay.stderr).toContain("no-such-cassette.json");
  });

  it("passes an exit status and a death by signal through (MCPCASSETTE_BIN)", () => {
    const script = (name: string, body: string) => {
      const file = path.join(tmp, name);
      fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
      return file;
    };
    const seven = spawnSync(shim, ["x"], { env: { ...process.env, MCPCASSETTE_BIN: script("exit7.sh", 'echo "$@"; exit 7') }, encoding: "utf8" });
    expect([seven.status, seven.stdout]).toEqual([7, "x\n"]);
    const killed = spawnSync(shim, [], { env: { ...process.env, MCPCASSETTE_BIN: script("selfkill.sh", "kill -TERM $$") } });
    expect([killed.status, killed.signal]).toEqual([null, "SIGTERM"]);
  });

  it("passes SIGTERM on: the binary stops cleanly and writes its report", async () => {
    const recorded = path.join(tmp, "core", "echo.json");
    expect(fs.existsSync(recorded)).toBe(true);
    const reportPath = path.join(tmp, "shim-report.json");
    const child = spawn(shim, ["run", "--mode", "none", "--cassette", recorded, "--listen", "127.0.0.1:0", "--report", reportPath], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const url = await firstLine(child);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(JSON.parse(fs.readFileSync(reportPath, "utf8")).finished).toBe(false);
    const exited = new Promise<[number | null, string | null]>((resolve) => child.on("exit", (code, signal) => resolve([code, signal])));
    child.kill("SIGTERM");
    expect(await exited).toEqual([0, null]);
    expect(JSON.parse(fs.readFileSync(reportPath, "utf8"))).toMatchObject({ finished: true, exit_code: 0 });
  });
});

describe("mcpcassette/vitest naming", () => {
  it("names cassettes after the test file and test", () => {
    expect(testFileStem("/x/tools.test.ts")).toBe("tools");
    expect(testFileStem("/x/tools.spec.mjs")).toBe("tools");
    expect(testFileStem("/x/tools.ts")).toBe("tools");
    expect(sanitizeTestName("search > finds: a/b \"c\" ")).toBe("search--finds-a-b-c");
    expect(sanitizeTestName("café > ../../etc")).toBe("cafe--etc");
    expect(sanitizeTestName("x".repeat(300)).length).toBe(120);
    expect(sanitizeTestName("x".repeat(300))).not.toBe(sanitizeTestName(`${"x".repeat(299)}y`));
    expect(cassette.path()).toBe(
      path.join(here, "cassettes", "api", "mcpcassette-vitest-naming--names-cassettes-after-the-test-file-and-test.json"),
    );
    expect(cassette.path("shared")).toBe(path.join(here, "cassettes", "shared.json"));
    expect(cassette.path("/abs/x.json")).toBe("/abs/x.json");
  });
});

function firstLine(child: ReturnType<typeof spawn>): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.once("line", (line) => resolve(line.trim()));
    child.once("exit", (code) => reject(new Error(`exited (${code}) before printing a line`)));
  });
}
