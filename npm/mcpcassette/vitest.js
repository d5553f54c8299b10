// mcpcassette/vitest: a cassette per test, named after it, and the test
// fails with mcpcassette's report when a request had no recorded answer.
//
// Call cassette.stdio() or cassette.http() inside a test (Vitest >= 1).

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { expect, onTestFinished } from "vitest";
import * as core from "./index.js";

/** How long to wait, after the test, for mcpcassette to write its final report. */
const REPORT_WAIT_MS = 5000;

/**
 * A test name as a file name: each describe block and the test's own name
 * made safe (letters, digits, `.`, `_` and `-`), joined with `--`.
 */
export function sanitizeTestName(name) {
  const parts = String(name)
    .split(" > ")
    .map((part) =>
      part
        .normalize("NFKD")
        .replace(/[\u0300-\u036f]/g, "")
        .replace(/[^A-Za-z0-9._-]+/g, "-")
        .replace(/-{2,}/g, "-")
        .replace(/^[-.]+|[-.]+$/g, ""),
    )
    .filter((part) => part.length > 0);
  let safe = parts.join("--") || "test";
  if (safe.length > 120) {
    const hash = createHash("sha256").update(String(name)).digest("hex").slice(0, 10);
    safe = `${safe.slice(0, 109)}-${hash}`;
  }
  return safe;
}

/** `tests/tools.test.ts` → `tools` (what the cassettes directory is named after). */
export function testFileStem(file) {
  const base = path.basename(file);
  const stripped = base.replace(/\.(test|spec|e2e|integration)\.[cm]?[jt]sx?$/i, "");
  if (stripped !== base) return stripped;
  return base.replace(/\.[cm]?[jt]sx?$/i, "");
}

function currentTest(what) {
  const state = expect.getState();
  const name = state.currentTestName;
  const file = state.testPath;
  if (!name || !file) {
    throw new Error(
      `mcpcassette/vitest: cassette.${what}() must be called inside a test (expect.getState() names no current test)`,
    );
  }
  return { name, file: path.resolve(file) };
}

// How many cassettes a test has asked for so far: the second default
// cassette of a test is NAME-2.json, and so on.
const perTest = new Map();

/**
 * The cassette a call in the current test uses: `options.cassette` (an
 * absolute path as is; a relative name under `<test dir>/cassettes/`,
 * `.json` added when it has no extension), else
 * `<test dir>/cassettes/<test file stem>/<test name>.json`.
 */
function cassetteFor(test, options) {
  const cassettesDir = path.join(path.dirname(test.file), "cassettes");
  if (options.name && !options.cassette) {
    const base = sanitizeTestName(test.name);
    return path.join(cassettesDir, testFileStem(test.file), `${base}.${sanitizeTestName(options.name)}.json`);
  }
  if (options.cassette) {
    const given = String(options.cassette);
    const withExt = path.extname(given) ? given : `${given}.json`;
    return path.isAbsolute(withExt) ? withExt : path.join(cassettesDir, withExt);
  }
  const key = `${test.file}\0${test.name}`;
  const count = (perTest.get(key) ?? 0) + 1;
  perTest.set(key, count);
  if (count === 1) onTestFinished(() => perTest.delete(key));
  const base = sanitizeTestName(test.name) + (count > 1 ? `-${count}` : "");
  return path.join(cassettesDir, testFileStem(test.file), `${base}.json`);
}

function relative(file) {
  const rel = path.relative(process.cwd(), file);
  return rel && !rel.startsWith("..") ? rel : file;
}

function recordHint(test) {
  return `e.g. \`npx vitest run ${relative(test.file)}\` on your machine (without CI set)`;
}

function failure(message, report, test) {
  let text = message;
  if (report && ((report.misses ?? []).length > 0 || report.misses_not_kept)) {
    text +=
      `\n\nFrom the test suite: \`MCPCASSETTE_MODE=new-episodes npx vitest run ${relative(test.file)}\` records what is missing, ` +
      `\`MCPCASSETTE_MODE=all npx vitest run ${relative(test.file)}\` re-records the file's cassettes.`;
  }
  const error = new Error(text);
  error.report = report;
  return error;
}

function cleanup(reportPath, ownReport) {
  if (!ownReport) return;
  try {
    fs.rmSync(path.dirname(reportPath), { recursive: true, force: true });
  } catch {
    // a temporary directory; never mind
  }
}

function removeFaults(faultsPath) {
  if (!faultsPath) return;
  try {
    fs.rmSync(path.dirname(faultsPath), { recursive: true, force: true });
  } catch {
    // a temporary directory; never mind
  }
}

function options(what, given) {
  const test = currentTest(what);
  const opts = { ...(given ?? {}) };
  const cassette = cassetteFor(test, opts);
  return { test, opts: { ...opts, cassette, recordHint: recordHint(test) } };
}

/** The stdio servers each running test asked for, by command (or name). */
const stdioServers = new Map();

export const cassette = {
  /**
   * `StdioClientTransport` parameters that run the server through
   * mcpcassette with this test's cassette. However many times the client
   * starts it, every process is recorded into (and replayed from) that
   * cassette; the test fails after it ends if any process missed.
   *
   * A second server in one test gets `<test>-2.json` (in the order the
   * test asks, whatever order they start in), or `<test>.<name>.json`
   * with `name`; asking again for the same command (or name) gives the
   * same parameters.
   *
   * With `faults` (a list of fault rules, or `{seed, faults}`) the replay
   * misbehaves as they say; `cassette.faults(params)` tells which fired.
   * A run that would record refuses them: point `cassette` at a cassette
   * another test recorded.
   */
  stdio(given) {
    const test = currentTest("stdio");
    const testKey = `${test.file}\0${test.name}`;
    let known = stdioServers.get(testKey);
    if (!known) {
      known = new Map();
      stdioServers.set(testKey, known);
      onTestFinished(() => stdioServers.delete(testKey));
    }
    const serverKey = given?.name
      ? `name\0${given.name}`
      : `command\0${given?.command}\0${JSON.stringify(given?.args ?? [])}\0${given?.cassette ?? ""}`;
    if (known.has(serverKey)) return known.get(serverKey);
    const { opts } = options("stdio", given);
    const params = core.stdio(opts);
    known.set(serverKey, params);
    const ownScope = !opts.scopeDir;
    onTestFinished(async () => {
      // The clients are closed by now (close() signals each process), or
      // were not (the test threw first): then they are stopped here.
      const waitedMs = opts.reportTimeoutMs ?? REPORT_WAIT_MS;
      const { report } = await core.finishRun(params, { timeoutMs: waitedMs });
      cleanup(path.join(params.scopeDir, "report.json"), ownScope);
      removeFaults(params.faultsPath);
      const message = core.failureMessage(report, { waitedMs });
      if (message) throw failure(message, report, test);
    }, 60000);
    return params;
  },

  /**
   * Starts mcpcassette over Streamable HTTP with this test's cassette (a
   * recording proxy in front of `upstream`, or a replay; a URL alone is
   * the upstream); it is stopped
   * when the test ends, and the test fails if the replay missed.
   */
  async http(given) {
    // `cassette.http(url)`: the upstream alone, everything else by default.
    if (typeof given === "string" || given instanceof URL) given = { upstream: String(given) };
    const { test, opts } = options("http", given);
    const ownReport = !opts.reportPath;
    let started;
    onTestFinished(async () => {
      let handle;
      try {
        handle = await started;
      } catch {
        return; // the test already failed with the reason
      }
      const report = await handle.close();
      cleanup(handle.reportPath, ownReport);
      removeFaults(handle.faultsPath);
      const message = core.failureMessage(report);
      if (message) throw failure(message, report, test);
    }, 60000);
    started = core.http(opts);
    return await started;
  },

  /**
   * What the faults overlay of a server did (`readFaults`): pass the
   * parameters `cassette.stdio()` returned (after `client.close()`), or the
   * handle of `cassette.http()` (stopped first).
   */
  faults(target, options) {
    return core.readFaults(target, options);
  },

  /** The path the next default cassette of the current test would have (without counting it). */
  path(name) {
    const test = currentTest("path");
    if (name) return cassetteFor(test, { cassette: name });
    const key = `${test.file}\0${test.name}`;
    const count = (perTest.get(key) ?? 0) + 1;
    const base = sanitizeTestName(test.name) + (count > 1 ? `-${count}` : "");
    return path.join(path.dirname(test.file), "cassettes", testFileStem(test.file), `${base}.json`);
  },
};

export { binaryPath, failureMessage, finishRun, isCI, readFaults, readReport, resolveMode } from "./index.js";
