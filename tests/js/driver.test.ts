// The meta-level: runs `vitest run` on copies of suites/ in child
// processes, with the environment each scenario chooses (as a developer's
// machine or CI would), and checks the exit status, which test failed and
// with what, and what Vitest printed.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const here = path.dirname(fileURLToPath(import.meta.url));
const vitestBin = path.join(here, "node_modules/vitest/vitest.mjs");
const demoServer = process.env.MCPCASSETTE_DEMO_SERVER!;
const httpServer = process.env.MCPCASSETTE_HTTP_SERVER!;
const scenarios = path.join(here, "scenarios");

interface AssertionResult {
  fullName: string;
  status: string;
  failureMessages: string[];
}
interface Run {
  code: number | null;
  output: string;
  tests: AssertionResult[];
}

/** A fresh copy of suites/, inside this project (so `mcpcassette` resolves to node_modules). */
function project(name: string): string {
  const dir = path.join(scenarios, name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  for (const file of fs.readdirSync(path.join(here, "suites"))) {
    fs.copyFileSync(path.join(here, "suites", file), path.join(dir, file));
  }
  return dir;
}

/** `vitest run FILE` in `dir` with `env` on top of a clean environment (no CI, no mode). */
function vitest(dir: string, file: string, env: Record<string, string | undefined>): Promise<Run> {
  const childEnv: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (key.startsWith("VITEST") || key.startsWith("FIXTURE_")) continue;
    if (["CI", "TF_BUILD", "MCPCASSETTE_MODE", "MCPCASSETTE_BIN", "NODE_ENV", "FORCE_COLOR", "TEST"].includes(key)) continue;
    childEnv[key] = value;
  }
  childEnv.NO_COLOR = "1";
  for (const [key, value] of Object.entries(env)) if (value !== undefined) childEnv[key] = value;
  const results = path.join(dir, "results.json");
  fs.rmSync(results, { force: true });
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [vitestBin, "run", file, "--reporter=default", "--reporter=json", `--outputFile.json=${results}`],
      { cwd: dir, env: childEnv, stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 100_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      let tests: AssertionResult[] = [];
      if (fs.existsSync(results)) {
        const json = JSON.parse(fs.readFileSync(results, "utf8"));
        tests = json.testResults.flatMap((r: { assertionResults: AssertionResult[] }) => r.assertionResults);
      }
      resolve({ code, output, tests });
    });
  });
}

function only(run: Run, fullName: string): AssertionResult {
  expect(run.tests.map((t) => t.fullName), run.output).toEqual([fullName]);
  return run.tests[0];
}

const sh = "/bin/sh";
/** The demo server behind a wrapper that notes in `marker` each time it is started. */
function markedServer(marker: string): string {
  return JSON.stringify([sh, "-c", 'echo started >> "$0"; exec "$1"', marker, demoServer]);
}

describe("processes: two servers, each started once per call", () => {
  const notesServer = process.env.MCPCASSETTE_NOTES_SERVER!;
  const name = "agent uses two servers, one process per call";
  const dir = project("processes");
  const cassettes = path.join(dir, "cassettes", "processes");
  const marker = path.join(dir, "server-started");
  const server = JSON.stringify([sh, "-c", 'echo started >> "$0"; exec "$1" "$2"', marker, notesServer]);
  const freshNotes = () => {
    const notes = path.join(dir, "notes");
    fs.rmSync(notes, { recursive: true, force: true });
    fs.mkdirSync(notes);
    return notes;
  };
  const processes = (file: string) => {
    const recorded = JSON.parse(fs.readFileSync(path.join(cassettes, file), "utf8"));
    return [...new Set(recorded.interactions.map((i: { process?: number }) => i.process ?? 0))];
  };

  it("first run records every process of each server into its own cassette", async () => {
    const run = await vitest(dir, "processes.test.ts", { FIXTURE_SERVER: server, FIXTURE_NOTES: freshNotes() });
    expect(run.code, run.output).toBe(0);
    expect(only(run, name).status).toBe("passed");
    expect(fs.readdirSync(cassettes).sort()).toEqual([
      "agent--uses-two-servers-one-process-per-call.json",
      "agent--uses-two-servers-one-process-per-call.theirs.json",
    ]);
    expect(processes("agent--uses-two-servers-one-process-per-call.json")).toEqual([0, 1, 2]);
    expect(processes("agent--uses-two-servers-one-process-per-call.theirs.json")).toEqual([0, 1, 2]);
  });

  it("CI=true replays every process, state and all, without starting the server", async () => {
    fs.rmSync(marker, { force: true });
    const run = await vitest(dir, "processes.test.ts", { CI: "true", FIXTURE_SERVER: server, FIXTURE_NOTES: freshNotes() });
    expect(run.code, run.output).toBe(0);
    expect(only(run, name).status).toBe("passed");
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("a miss in one process fails the test, though the agent swallowed the error", async () => {
    const run = await vitest(dir, "processes.test.ts", {
      CI: "true",
      FIXTURE_SERVER: server,
      FIXTURE_NOTES: freshNotes(),
      FIXTURE_NOTE: "changed",
    });
    expect(run.code, run.output).toBe(1);
    const failure = only(run, name).failureMessages.join("\n");
    expect(failure).toContain("server process 2 of 3");
    expect(failure).toContain("no recorded interaction matches this request");
    expect(failure).toContain('"note": "changed"');
  });
});

describe("stdio: cassette.stdio() with StdioClientTransport", () => {
  const name = "echo answers from the cassette";
  const dir = project("stdio");
  const marker = path.join(dir, "server-started");
  const cassettePath = path.join(dir, "cassettes", "stdio", "echo--answers-from-the-cassette.json");
  const cassetteText = () => fs.readFileSync(cassettePath, "utf8");

  it("first run records: the cassette is created, named after the test", async () => {
    const run = await vitest(dir, "stdio.test.ts", { FIXTURE_SERVER: markedServer(marker) });
    expect(run.code, run.output).toBe(0);
    expect(only(run, name).status).toBe("passed");
    expect(fs.readFileSync(marker, "utf8")).toBe("started\n");
    expect(cassetteText()).toContain("echo: hello");
  });

  it("second run replays; the server is not started", async () => {
    fs.rmSync(marker);
    const run = await vitest(dir, "stdio.test.ts", { FIXTURE_SERVER: markedServer(marker) });
    expect(run.code, run.output).toBe(0);
    expect(only(run, name).status).toBe("passed");
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("CI=true replays with a server command that cannot exist", async () => {
    const run = await vitest(dir, "stdio.test.ts", { CI: "true", FIXTURE_SERVER: JSON.stringify(["/nonexistent/demo_server"]) });
    expect(run.code, run.output).toBe(0);
    expect(only(run, name).status).toBe("passed");
  });

  it("CI=true and a changed argument: the test fails with the miss report", async () => {
    const before = cassetteText();
    const run = await vitest(dir, "stdio.test.ts", { CI: "true", FIXTURE_SERVER: markedServer(marker), FIXTURE_MESSAGE: "changed" });
    expect(run.code, run.output).toBe(1);
    const test = only(run, name);
    expect(test.status).toBe("failed");
    const failure = test.failureMessages.join("\n");
    // The hook's error: the report as stderr shows it, not just the SDK's one-line McpError.
    expect(failure).toContain("no recorded interaction matches this request");
    expect(failure).toContain("Closest recorded requests:");
    expect(failure).toContain('+    "message": "changed"');
    expect(failure).toContain("MCPCASSETTE_MODE=all npx vitest run stdio.test.ts");
    // ... and Vitest prints it.
    expect(run.output).toContain("FAIL");
    expect(run.output).toContain("echo > answers from the cassette");
    expect(run.output).toContain("Closest recorded requests:");
    expect(run.output).toContain('-    "message": "hello"');
    expect(fs.existsSync(marker)).toBe(false);
    expect(cassetteText()).toBe(before);
  });

  it("failOnUnused: a replay that leaves an interaction unused fails the test", async () => {
    const env = { CI: "true", FIXTURE_SERVER: JSON.stringify(["/nonexistent/demo_server"]), FIXTURE_SKIP_CALL: "1" };
    const lenient = await vitest(dir, "stdio.test.ts", env);
    expect(lenient.code, lenient.output).toBe(0);
    const strict = await vitest(dir, "stdio.test.ts", { ...env, FIXTURE_FAIL_ON_UNUSED: "1" });
    expect(strict.code, strict.output).toBe(1);
    const failure = only(strict, name).failureMessages.join("\n");
    expect(failure).toContain("--fail-on-unused");
    expect(failure).toContain('tools/call {"name":"echo","arguments":{"message":"hello"}}');
  });

  it("MCPCASSETTE_MODE=all re-records, even under CI=true", async () => {
    const run = await vitest(dir, "stdio.test.ts", {
      CI: "true",
      MCPCASSETTE_MODE: "all",
      FIXTURE_SERVER: markedServer(marker),
      FIXTURE_MESSAGE: "again",
    });
    expect(run.code, run.output).toBe(0);
    expect(fs.readFileSync(marker, "utf8")).toBe("started\n");
    expect(cassetteText()).toContain("echo: again");
    expect(cassetteText()).not.toContain("echo: hello");
  });

  it("a replay error (an unreadable cassette) fails the test with the error", async () => {
    fs.writeFileSync(cassettePath, '{"version": 1, "interactions": 3}\n');
    const run = await vitest(dir, "stdio.test.ts", { CI: "true", FIXTURE_SERVER: JSON.stringify(["/nonexistent/demo_server"]) });
    expect(run.code, run.output).toBe(1);
    const failure = only(run, name).failureMessages.join("\n");
    expect(failure).toContain("failed: ");
    expect(failure).toContain("echo--answers-from-the-cassette.json");
  });

  it("CI=true with a missing cassette fails the test at once, starting nothing", async () => {
    const fresh = project("stdio-missing");
    const freshMarker = path.join(fresh, "server-started");
    const missing = path.join(fresh, "cassettes", "stdio", "echo--answers-from-the-cassette.json");
    const run = await vitest(fresh, "stdio.test.ts", { CI: "true", FIXTURE_SERVER: markedServer(freshMarker) });
    expect(run.code, run.output).toBe(1);
    const failure = only(run, name).failureMessages.join("\n");
    expect(failure).toContain(`mode none replays only, and the cassette ${missing} does not exist`);
    expect(failure).toContain("npx vitest run stdio.test.ts");
    expect(run.output).toContain("does not exist");
    expect(fs.existsSync(freshMarker)).toBe(false);
    expect(fs.existsSync(missing)).toBe(false);
  });
});

describe("http: cassette.http() with StreamableHTTPClientTransport", () => {
  const name = "http echoes over Streamable HTTP";
  const dir = project("http");
  const cassettePath = path.join(dir, "cassettes", "http", "http--echoes-over-Streamable-HTTP.json");
  let server: ReturnType<typeof spawn> | undefined;
  let upstream = "";

  beforeAll(async () => {
    server = spawn(httpServer, ["0"], { stdio: ["ignore", "pipe", "inherit"] });
    upstream = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: server!.stdout! }).once("line", (line) => resolve(line.trim()));
      server!.once("exit", (code) => reject(new Error(`${httpServer} exited (${code})`)));
    });
    expect(upstream).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });
  afterAll(() => {
    server?.kill("SIGTERM");
  });

  it("first run records through the proxy", async () => {
    const run = await vitest(dir, "http.test.ts", { FIXTURE_UPSTREAM: upstream });
    expect(run.code, run.output).toBe(0);
    expect(only(run, name).status).toBe("passed");
    expect(fs.readFileSync(cassettePath, "utf8")).toContain("Echo: hello");
  });

  it("replays with the server gone (CI=true, and mode once with its dead URL)", async () => {
    server!.kill("SIGTERM");
    await new Promise((resolve) => (server!.exitCode !== null || server!.signalCode !== null ? resolve(null) : server!.once("exit", resolve)));
    const ci = await vitest(dir, "http.test.ts", { CI: "true" });
    expect(ci.code, ci.output).toBe(0);
    expect(only(ci, name).status).toBe("passed");
    const local = await vitest(dir, "http.test.ts", { FIXTURE_UPSTREAM: upstream });
    expect(local.code, local.output).toBe(0);
  });

  it("a changed argument fails the test with the miss report", async () => {
    const run = await vitest(dir, "http.test.ts", { CI: "true", FIXTURE_MESSAGE: "changed" });
    expect(run.code, run.output).toBe(1);
    const failure = only(run, name).failureMessages.join("\n");
    expect(failure).toContain("no recorded interaction matches this request");
    expect(failure).toContain('+    "message": "changed"');
    expect(run.output).toContain("Closest recorded requests:");
  });

  it("CI=true with a missing cassette fails the test at once", async () => {
    const fresh = project("http-missing");
    const run = await vitest(fresh, "http.test.ts", { CI: "true", FIXTURE_UPSTREAM: upstream });
    expect(run.code, run.output).toBe(1);
    const failure = only(run, name).failureMessages.join("\n");
    expect(failure).toContain("mode none replays only, and the cassette");
    expect(failure).toContain("http--echoes-over-Streamable-HTTP.json does not exist");
  });
});

describe("the README's example, as written", () => {
  // .ci/js.sh copies the repository's README.md here.
  const readme = fs.readFileSync(path.join(here, "README.repo.md"), "utf8");
  const start = readme.indexOf("\n## JavaScript/TypeScript (Vitest)\n");
  const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
  const block = (first: string) => {
    const match = new RegExp("```(?:js|ts)\\n(" + first.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&") + "\\n[\\s\\S]*?)```").exec(section);
    if (!match) throw new Error(`README.md's Vitest section has no code block starting with ${first}`);
    return match[1];
  };
  const dir = path.join(scenarios, "readme");
  const cassettePath = path.join(dir, "cassettes", "weather", "weather--forecasts.json");
  const name = "weather forecasts";

  beforeAll(() => {
    expect(start).toBeGreaterThan(0);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "server.mjs"), block("// server.mjs"));
    fs.writeFileSync(path.join(dir, "weather.test.ts"), block("// weather.test.ts"));
  });

  it("records on the first run, where the README says", async () => {
    const run = await vitest(dir, "weather.test.ts", {});
    expect(run.code, run.output).toBe(0);
    expect(only(run, name).status).toBe("passed");
    expect(fs.readFileSync(cassettePath, "utf8")).toContain("Sunny in Oslo");
  });

  it("replays under CI=true with the server gone", async () => {
    fs.renameSync(path.join(dir, "server.mjs"), path.join(dir, "server.mjs.gone"));
    const run = await vitest(dir, "weather.test.ts", { CI: "true" });
    expect(run.code, run.output).toBe(0);
    expect(only(run, name).status).toBe("passed");
  });

  it("fails with the miss report shown in the README when the city changes", async () => {
    const test = path.join(dir, "weather.test.ts");
    fs.writeFileSync(test, fs.readFileSync(test, "utf8").replace('city: "Oslo" }', 'city: "Bergen" }'));
    const run = await vitest(dir, "weather.test.ts", { CI: "true" });
    expect(run.code, run.output).toBe(1);
    expect(run.output).toContain(" FAIL  weather.test.ts > weather > forecasts");
    const shown = section.slice(section.indexOf("```text\n") + 8, section.indexOf("```", section.indexOf("```text\n") + 8));
    // Each line the README shows (but its elisions) is in Vitest's output.
    for (const line of shown.split("\n")) {
      for (const part of line.split("…").map((p) => p.trim()).filter((p) => p.length > 0)) {
        expect(run.output, `README line: ${line}`).toContain(part);
      }
    }
  });
});

describe("faults: cassette.stdio({faults}) replays another test's recording, misbehaving", () => {
  const dir = project("faults");
  const cassettePath = path.join(dir, "cassettes", "faults", "echo--records.json");
  const replays = [
    "echo surfaces a tool error",
    "echo times out on a hung call, and cancels it",
    "echo retries after an error, and the retry succeeds",
    "echo sees the server hang up",
    "echo has a fault that never fires",
  ];
  const statuses = (run: Run) => Object.fromEntries(run.tests.map((t) => [t.fullName, t.status]));

  it("the first run records, and each failure test replays the recording with its faults", async () => {
    const run = await vitest(dir, "faults.test.ts", { FIXTURE_SERVER: JSON.stringify([demoServer]) });
    expect(run.code, run.output).toBe(0);
    expect(statuses(run)).toEqual(Object.fromEntries(["echo records", ...replays].map((name) => [name, "passed"])));
    // No fault reached the cassette.
    const text = fs.readFileSync(cassettePath, "utf8");
    expect(text).toContain("echo: b");
    expect(text).not.toContain("rate limited");
    expect(text).not.toContain("isError");
  });

  it("CI=true replays every failure path with the server gone", async () => {
    const run = await vitest(dir, "faults.test.ts", { CI: "true", FIXTURE_SERVER: JSON.stringify(["/nonexistent/demo_server"]) });
    expect(run.code, run.output).toBe(0);
    expect(run.tests.filter((t) => t.status === "passed").length).toBe(1 + replays.length);
  });

  it("failOnUnused: a fault rule that never fires fails its test", async () => {
    const run = await vitest(dir, "faults.test.ts", {
      CI: "true",
      FIXTURE_SERVER: JSON.stringify(["/nonexistent/demo_server"]),
      FIXTURE_FAIL_ON_UNUSED: "1",
    });
    expect(run.code, run.output).toBe(1);
    const failed = run.tests.filter((t) => t.status === "failed");
    expect(failed.map((t) => t.fullName)).toEqual(["echo has a fault that never fires"]);
    const failure = failed[0].failureMessages.join("\n");
    expect(failure).toContain("fault rules never fired");
    expect(failure).toContain('#0 name echo nth 5: tool error "never"');
  });

  it("faults are refused while recording, starting nothing", async () => {
    const fresh = project("faults-recording");
    const marker = path.join(fresh, "server-started");
    const run = await vitest(fresh, "faults.test.ts", { FIXTURE_SERVER: markedServer(marker), FIXTURE_SKIP_RECORDING: "1" });
    expect(run.code, run.output).toBe(1);
    expect(statuses(run)).toEqual({ "echo records": "skipped", ...Object.fromEntries(replays.map((name) => [name, "failed"])) });
    const missing = path.join(fresh, "cassettes", "faults", "echo--records.json");
    const failure = run.tests.find((t) => t.fullName === replays[0])!.failureMessages.join("\n");
    expect(failure).toContain(`faults are given, but the cassette ${missing} does not exist, so mode once would record it`);
    expect(failure).toContain("faults apply only when replaying");
    expect(failure).toContain("Record the cassette without faults first");
    expect(fs.existsSync(marker)).toBe(false);
    expect(fs.existsSync(missing)).toBe(false);

    // Recorded, then re-recorded on purpose: mode all refuses them too.
    const all = await vitest(dir, "faults.test.ts", { MCPCASSETTE_MODE: "all", FIXTURE_SERVER: markedServer(marker), FIXTURE_SKIP_RECORDING: "1" });
    expect(all.code, all.output).toBe(1);
    expect(all.tests.find((t) => t.fullName === replays[0])!.failureMessages.join("\n")).toContain(
      `faults are given, but mode all re-records ${cassettePath}`,
    );
    expect(fs.existsSync(marker)).toBe(false);
  });
});

describe("docs/faults.md's Vitest example, as written", () => {
  // .ci/js.sh copies the repository's README.md and docs/faults.md here.
  const docs = fs.readFileSync(path.join(here, "faults.repo.md"), "utf8");
  const readme = fs.readFileSync(path.join(here, "README.repo.md"), "utf8");
  const block = (text: string, first: string) => {
    const match = new RegExp("```(?:js|ts)\\n(" + first.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&") + "\\n[\\s\\S]*?)```").exec(text);
    if (!match) throw new Error(`no code block starting with ${first}`);
    return match[1];
  };
  const dir = path.join(scenarios, "faults-docs");
  const names = ["weather forecasts", "weather tells the user when the tool fails", "weather gives up on a hung call"];

  beforeAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    // The README's weather server, which the example's first test records.
    fs.writeFileSync(path.join(dir, "server.mjs"), block(readme, "// server.mjs"));
    fs.writeFileSync(path.join(dir, "weather-faults.test.ts"), block(docs, "// weather-faults.test.ts"));
  });

  it("records, then replays the recording with each test's faults", async () => {
    const run = await vitest(dir, "weather-faults.test.ts", {});
    expect(run.code, run.output).toBe(0);
    expect(run.tests.map((t) => [t.fullName, t.status])).toEqual(names.map((name) => [name, "passed"]));
    expect(fs.existsSync(path.join(dir, "cassettes", "weather-faults", "weather--forecasts.json"))).toBe(true);
  });

  it("replays under CI=true with the server gone", async () => {
    fs.renameSync(path.join(dir, "server.mjs"), path.join(dir, "server.mjs.gone"));
    const run = await vitest(dir, "weather-faults.test.ts", { CI: "true" });
    expect(run.code, run.output).toBe(0);
    expect(run.tests.map((t) => [t.fullName, t.status])).toEqual(names.map((name) => [name, "passed"]));
  });
});
