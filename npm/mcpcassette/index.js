// mcpcassette for Node: find the binary, build the arguments of
// `mcpcassette run` for an MCP client transport, and read its report.
//
// Plain ESM, no dependencies, no build step; the types are in index.d.ts.

import { spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const require = createRequire(import.meta.url);

/** The modes `mcpcassette run --mode` accepts. */
export const MODES = Object.freeze(["auto", "once", "new-episodes", "all", "none", "passthrough"]);

/**
 * Platforms with a published binary package. Every other platform/arch maps
 * to a package name too (`platformPackage`), which is simply not published.
 */
export const SUPPORTED_PLATFORMS = Object.freeze(["linux-x64"]);

/** The npm package that holds the binary for `platform` and `arch`. */
export function platformPackage(platform = process.platform, arch = process.arch) {
  return `@mcpcassette/${platform}-${arch}`;
}

/** The binary's file name inside its package (`bin/mcpcassette[.exe]`). */
export function binaryName(platform = process.platform) {
  return platform === "win32" ? "mcpcassette.exe" : "mcpcassette";
}

/**
 * The path of the mcpcassette binary: `MCPCASSETTE_BIN` when set, else the
 * binary of the platform package npm installed next to this one.
 */
export function binaryPath(options = {}) {
  const env = options.env ?? process.env;
  const override = env.MCPCASSETTE_BIN;
  if (override) {
    if (!fs.existsSync(override)) {
      throw new Error(`MCPCASSETTE_BIN is set to ${override}, which does not exist`);
    }
    return override;
  }
  const platform = options.platform ?? process.platform;
  const arch = options.arch ?? process.arch;
  const pkg = platformPackage(platform, arch);
  const file = `${pkg}/bin/${binaryName(platform)}`;
  let found;
  try {
    found = require.resolve(file);
  } catch {
    const published = SUPPORTED_PLATFORMS.includes(`${platform}-${arch}`);
    throw new Error(
      `mcpcassette: the binary for this platform (${platform}-${arch}) is missing: ` +
        (published
          ? `the package ${pkg} is not installed. npm installs it as an optional dependency of mcpcassette; ` +
            `reinstall without --no-optional / --omit=optional (npm i -D mcpcassette), ` +
            `or set MCPCASSETTE_BIN to a mcpcassette binary`
          : `no package ${pkg} is published (binaries exist for ${SUPPORTED_PLATFORMS.join(", ")}); ` +
            `build mcpcassette from source with cargo and set MCPCASSETTE_BIN to the binary`),
    );
  }
  ensureExecutable(found);
  return found;
}

function ensureExecutable(file) {
  if (process.platform === "win32") return;
  try {
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    // Some package managers and archive tools drop the mode bits.
    try {
      fs.chmodSync(file, 0o755);
    } catch {
      // Report it when it fails to start instead.
    }
  }
}

/** Whether `env` says this is CI, as mcpcassette itself decides it. */
export function isCI(env = process.env) {
  if (env.TF_BUILD !== undefined) return true;
  const ci = env.CI;
  if (ci === undefined) return false;
  const value = ci.trim().toLowerCase();
  return !(value === "" || value === "0" || value === "false");
}

/**
 * The mode to pass as `--mode`: `options.mode`, else `MCPCASSETTE_MODE`,
 * else `none` in CI and `once` elsewhere. `auto` resolves the same way as
 * no mode. Resolved here, in the test process, because MCP client SDKs
 * start servers with a reduced environment.
 */
export function resolveMode(options = {}) {
  const env = options.env ?? process.env;
  let mode = options.mode;
  let source = "the mode option";
  if (mode === undefined || mode === null || mode === "") {
    mode = env.MCPCASSETTE_MODE;
    source = "MCPCASSETTE_MODE";
  }
  if (mode === undefined || mode === null || mode === "") mode = "auto";
  mode = String(mode).trim().toLowerCase();
  if (!MODES.includes(mode)) {
    throw new Error(`mcpcassette: unknown mode "${mode}" (from ${source}); expected one of ${MODES.join(", ")}`);
  }
  if (mode === "auto") return isCI(env) ? "none" : "once";
  return mode;
}

/**
 * The error to throw when the mode replays only and the cassette is
 * missing: names the path and how to record it.
 */
function missingCassetteError(cassette, mode, hint) {
  return new Error(
    `mcpcassette: mode ${mode} replays only, and the cassette ${cassette} does not exist. ` +
      `Record it by running the test outside CI (mode once records a missing cassette), ` +
      (hint ?? "e.g. MCPCASSETTE_MODE=once npm test") +
      `, and commit the cassette.`,
  );
}

function newReportPath() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpcassette-"));
  return path.join(dir, "report.json");
}

/**
 * Writes `options.faults` (a list of fault rules, or `{seed, faults}`) to a
 * JSON file for `run --faults`; `null` without faults. Throws at once when
 * the run would record: faults apply only when replaying (a fault must
 * never reach a cassette), and nothing is started then.
 */
function faultsFile(options, mode, cassette, what) {
  const faults = options.faults;
  if (faults === undefined || faults === null) return null;
  const isList = Array.isArray(faults);
  if (!isList && !(typeof faults === "object" && Array.isArray(faults.faults))) {
    throw new TypeError(`mcpcassette.${what}: faults must be a list of fault rules, or {seed, faults: [...]}`);
  }
  const replays = mode === "none" || (mode === "once" && fs.existsSync(cassette));
  if (!replays) {
    const why =
      mode === "once"
        ? `the cassette ${cassette} does not exist, so mode once would record it`
        : mode === "all"
          ? `mode all re-records ${cassette}`
          : mode === "new-episodes"
            ? `mode new-episodes records what is missing in ${cassette}`
            : `mode ${mode} forwards to the server`;
    throw new Error(
      `mcpcassette: faults are given, but ${why}: faults apply only when replaying, so that a fault never ` +
        `reaches a cassette. Record the cassette without faults first (a test of its own, or this one without ` +
        `faults), then point this test at it with the cassette option. The server was not started.`,
    );
  }
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mcpcassette-faults-")), "faults.json");
  fs.writeFileSync(file, JSON.stringify(faults, null, 2));
  return file;
}

function commonArgs(mode, cassette, reportPath, options) {
  const args = ["run", "--mode", mode, "--cassette", cassette, "--report", reportPath];
  if (options.failOnUnused) args.push("--fail-on-unused");
  if (options.extraArgs) args.push(...options.extraArgs.map(String));
  return args;
}

function prepare(options, what) {
  if (!options || typeof options !== "object") throw new TypeError(`mcpcassette.${what}: options are required`);
  if (!options.cassette) throw new TypeError(`mcpcassette.${what}: the cassette option is required`);
  const mode = resolveMode(options);
  const cassette = path.resolve(String(options.cassette));
  if (mode === "none" && !fs.existsSync(cassette)) {
    throw missingCassetteError(cassette, mode, options.recordHint);
  }
  const reportPath = options.reportPath ? path.resolve(String(options.reportPath)) : newReportPath();
  if (options.reportPath) {
    // A report left by an earlier run would be read as this one's.
    fs.rmSync(reportPath, { force: true });
  }
  const binary = options.binary ?? binaryPath();
  return { mode, cassette, reportPath, binary };
}

/**
 * Parameters for the MCP SDK's `StdioClientTransport`: the server command
 * wrapped in `mcpcassette run --scope DIR`. However many times the client
 * starts it (agent frameworks start a probe, then the session, or a
 * process per call), every process records into the one cassette and
 * replays its own part of it; `finishRun(params)` collects them all.
 */
export function stdio(options) {
  if (!options?.command) throw new TypeError("mcpcassette.stdio: the command option (the server command) is required");
  if (!options.cassette) throw new TypeError("mcpcassette.stdio: the cassette option is required");
  const mode = resolveMode(options);
  const cassette = path.resolve(String(options.cassette));
  if (mode === "none" && !fs.existsSync(cassette)) {
    throw missingCassetteError(cassette, mode, options.recordHint);
  }
  const binary = options.binary ?? binaryPath();
  const faultsPath = faultsFile(options, mode, cassette, "stdio");
  const scopeDir = options.scopeDir
    ? path.resolve(String(options.scopeDir))
    : fs.mkdtempSync(path.join(os.tmpdir(), "mcpcassette-scope-"));
  const reportPath = scopeDir;
  const args = ["run", "--mode", mode, "--cassette", cassette, "--scope", scopeDir];
  if (options.failOnUnused) args.push("--fail-on-unused");
  if (faultsPath) args.push("--faults", faultsPath);
  if (options.extraArgs) args.push(...options.extraArgs.map(String));
  args.push("--", String(options.command), ...(options.args ?? []).map(String));
  const params = { command: binary, args };
  if (options.env !== undefined) params.env = options.env;
  if (options.cwd !== undefined) params.cwd = options.cwd;
  if (options.stderr !== undefined) params.stderr = options.stderr;
  // Not read by the transport; for readReport and failure messages.
  Object.defineProperties(params, {
    reportPath: { value: reportPath, enumerable: false },
    scopeDir: { value: scopeDir, enumerable: false },
    binary: { value: binary, enumerable: false },
    cassette: { value: cassette, enumerable: false },
    mode: { value: mode, enumerable: false },
    faultsPath: { value: faultsPath, enumerable: false },
  });
  return params;
}

/**
 * Starts `mcpcassette run` over Streamable HTTP: a recording proxy in front
 * of `upstream`, or a replay of the cassette. Resolves once it listens.
 */
export async function http(options) {
  const { mode, cassette, reportPath, binary } = prepare(options, "http");
  const faultsPath = faultsFile(options, mode, cassette, "http");
  const args = commonArgs(mode, cassette, reportPath, options);
  if (faultsPath) args.push("--faults", faultsPath);
  if (options.upstream) args.push("--upstream", String(options.upstream));
  args.push("--listen", options.listen ?? "127.0.0.1:0");
  const startTimeoutMs = options.startTimeoutMs ?? 15000;
  const echo = options.stderr !== "pipe";

  const child = spawn(binary, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: options.env ?? process.env,
    cwd: options.cwd,
  });
  let stderrText = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    stderrText += chunk;
    if (stderrText.length > 200000) stderrText = stderrText.slice(-100000);
    if (echo) process.stderr.write(chunk);
  });
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
    child.on("error", (error) => resolve({ code: null, signal: null, error }));
  });

  const url = await new Promise((resolve, reject) => {
    let buffered = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`mcpcassette run did not print its URL within ${startTimeoutMs} ms${tail(stderrText)}`));
    }, startTimeoutMs);
    child.stdout.setEncoding("utf8");
    const onData = (chunk) => {
      buffered += chunk;
      const newline = buffered.indexOf("\n");
      if (newline >= 0) {
        clearTimeout(timer);
        child.stdout.off("data", onData);
        child.stdout.resume();
        resolve(buffered.slice(0, newline).trim());
      }
    };
    child.stdout.on("data", onData);
    exited.then(async ({ code, signal, error }) => {
      clearTimeout(timer);
      if (error) return reject(new Error(`cannot start ${binary}: ${error.message}`));
      const report = await readReport(reportPath, { timeoutMs: 1000 }).catch(() => null);
      const why = report?.error ? `: ${report.error}` : "";
      reject(
        new Error(
          `mcpcassette run exited (${signal ?? `exit code ${code}`}) before it listened${why}${why ? "" : tail(stderrText)}`,
        ),
      );
    });
  });

  let closing;
  const handle = {
    url,
    cassette,
    mode,
    reportPath,
    faultsPath,
    process: child,
    get stderr() {
      return stderrText;
    },
    close(closeOptions = {}) {
      closing ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
        const killTimer = setTimeout(() => child.kill("SIGKILL"), closeOptions.timeoutMs ?? 10000);
        const { code, signal } = await exited;
        clearTimeout(killTimer);
        const report = await readReport(reportPath, { timeoutMs: 2000 });
        if (report) return report;
        return {
          cassette,
          mode,
          finished: true,
          exit_code: code ?? 2,
          error: `mcpcassette run ended (${signal ?? `exit code ${code}`}) without writing its report${tail(stderrText)}`,
        };
      })();
      return closing;
    },
  };
  return handle;
}

function tail(text) {
  const trimmed = text.trim();
  if (!trimmed) return "";
  const lines = trimmed.split("\n").slice(-20).join("\n");
  return `; its stderr ended with:\n${lines}`;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Reads the JSON report `mcpcassette run --report` writes. `null` when
 * there is none (the process was never started). While it says
 * `"finished": false` (the process is still shutting down), it is read
 * again until `timeoutMs` has passed; the last one read is returned.
 */
export async function readReport(reportPath, options = {}) {
  const timeoutMs = options.timeoutMs ?? 5000;
  const intervalMs = options.intervalMs ?? 25;
  const deadline = Date.now() + timeoutMs;
  if (isDirectory(reportPath)) {
    // A `stdio()` scope: every process's report, as one.
    for (;;) {
      const reports = scopeReports(reportPath);
      if (reports.length === 0) return null;
      if (reports.every((r) => r.finished) || Date.now() >= deadline) return combine(undefined, reports);
      await sleep(intervalMs);
    }
  }
  for (;;) {
    let report = null;
    let text;
    try {
      text = fs.readFileSync(reportPath, "utf8");
    } catch (error) {
      if (error.code === "ENOENT") return null;
      throw error;
    }
    try {
      report = JSON.parse(text);
    } catch {
      report = null; // written atomically, but be safe
    }
    if (report && report.finished) return report;
    if (Date.now() >= deadline) {
      if (report) return report;
      throw new Error(`mcpcassette: cannot parse the report ${reportPath}`);
    }
    await sleep(intervalMs);
  }
}

/**
 * What the faults overlay of a run did, from its report's `faults`:
 * `{rules, fired, fired_not_kept, unused, hung, disconnected}`. `target`
 * is the parameters `stdio()` returned (every process of the server,
 * waited for up to `timeoutMs`, together: a rule is unused when it fired
 * in none of them), the handle `http()` resolved to (stopped first: its
 * report is final only then), a report path, or a report. Throws when
 * there is no report or the run had no faults.
 */
export async function readFaults(target, options = {}) {
  let report;
  if (target && typeof target === "object" && typeof target.close === "function" && target.url) {
    report = await target.close();
  } else if (target && typeof target === "object" && (target.scopeDir || target.reportPath) && !("finished" in target)) {
    report = await readReport(target.scopeDir ?? target.reportPath, { timeoutMs: options.timeoutMs ?? 5000 });
  } else if (typeof target === "string") {
    report = await readReport(target, { timeoutMs: options.timeoutMs ?? 5000 });
  } else {
    report = target ?? null;
  }
  if (!report) throw new Error("mcpcassette.readFaults: there is no report (the server never started)");
  if (!report.faults) {
    throw new Error(
      `mcpcassette.readFaults: the run for ${report.cassette ?? "the cassette"} had no faults` +
        (report.error ? ` (it failed: ${report.error})` : ""),
    );
  }
  return report.faults;
}

/** Whether a run ended with the exit status a `disconnect` fault gave it, and nothing else went wrong. */
function disconnectedAsAsked(report) {
  const exit = report?.faults?.disconnected;
  return (
    exit !== undefined &&
    exit !== null &&
    report.exit_code === exit &&
    !report.error &&
    (report.misses ?? []).length === 0 &&
    !report.misses_not_kept
  );
}

/** The faults summaries of a server's processes as one. */
function combineFaults(summaries) {
  if (summaries.length === 0) return undefined;
  let unused = null;
  const out = { rules: summaries[0].rules ?? [], fired: [], fired_not_kept: 0, unused: [], hung: [], disconnected: null };
  for (const summary of summaries) {
    out.fired.push(...(summary.fired ?? []));
    out.fired_not_kept += summary.fired_not_kept ?? 0;
    out.hung.push(...(summary.hung ?? []));
    if (out.disconnected === null && summary.disconnected !== undefined) out.disconnected = summary.disconnected;
    const mine = new Set(summary.unused ?? []);
    unused = unused === null ? mine : new Set([...unused].filter((i) => mine.has(i)));
  }
  out.unused = [...(unused ?? [])].sort((a, b) => a - b);
  return out;
}

/**
 * Waits for the final report of a run whose client should be closing; if
 * the run is still going after `graceMs` (default 1000: the client was
 * not closed, say because the test threw first), stops it with SIGTERM
 * (the process the report names in `pid`), so that it writes its
 * report, and waits up to `timeoutMs` (default 5000) more.
 * Resolves to the report (`null` when the run never started) and whether
 * it had to be stopped.
 */
export async function finishRun(reportPath, options = {}) {
  if (reportPath && typeof reportPath === "object") {
    return finishScope(reportPath.scopeDir ?? reportPath.reportPath, { binary: reportPath.binary, ...options });
  }
  if (isDirectory(reportPath)) return finishScope(reportPath, options);
  const timeoutMs = options.timeoutMs ?? 5000;
  const report = await readReport(reportPath, { timeoutMs: options.graceMs ?? 1000 });
  if (!report || report.finished) return { report, stopped: false };
  // The client never closed it: stop it as the SDK's close() would. A
  // run ends on SIGTERM as on EOF, and writes its report first.
  let stopped = false;
  if (Number.isInteger(report.pid)) {
    try {
      process.kill(report.pid, "SIGTERM");
      stopped = true;
    } catch {
      // already gone
    }
  }
  const final = await readReport(reportPath, { timeoutMs });
  return { report: final, stopped };
}

function isDirectory(file) {
  try {
    return fs.statSync(file).isDirectory();
  } catch {
    return false;
  }
}

/** The reports the processes of a scope wrote so far, oldest first. */
function scopeReports(scopeDir) {
  let names;
  try {
    names = fs.readdirSync(scopeDir).filter((n) => n.endsWith(".report.json"));
  } catch {
    return [];
  }
  return names
    .map((name) => {
      const file = path.join(scopeDir, name);
      try {
        return { file, born: fs.statSync(file).birthtimeMs, report: JSON.parse(fs.readFileSync(file, "utf8")) };
      } catch {
        return null;
      }
    })
    .filter(Boolean)
    .sort((a, b) => a.born - b.born)
    .map((entry) => entry.report);
}

function running(report) {
  if (report.finished || !Number.isInteger(report.pid)) return false;
  try {
    process.kill(report.pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitForScope(scopeDir, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (scopeReports(scopeDir).some(running) && Date.now() < deadline) await sleep(25);
}

/**
 * Every server process of a `stdio()` scope: waits for them to end
 * (`graceMs`, then SIGTERM to those still running and `timeoutMs` more),
 * then runs `mcpcassette finish --scope`, which completes the cassette of
 * a recorder its client killed. Resolves to `{report, reports, stopped}`:
 * `reports` one per process in start order, `report` all of them as one
 * (every miss, labelled with its process), for `failureMessage`.
 */
export async function finishScope(scopeDir, options = {}) {
  await waitForScope(scopeDir, options.graceMs ?? 1000);
  let stopped = false;
  for (const report of scopeReports(scopeDir)) {
    if (!running(report)) continue;
    try {
      process.kill(report.pid, "SIGTERM");
      stopped = true;
    } catch {
      // gone meanwhile
    }
  }
  if (stopped) await waitForScope(scopeDir, options.timeoutMs ?? 5000);
  if (scopeReports(scopeDir).length === 0 && !fs.existsSync(path.join(scopeDir, "scope.json"))) {
    return { report: null, reports: [], stopped };
  }
  const binary = options.binary ?? binaryPath();
  const { spawnSync } = await import("node:child_process");
  const done = spawnSync(binary, ["finish", "--scope", scopeDir], { encoding: "utf8" });
  if (done.status !== 0) {
    const report = { finished: true, exit_code: 2, error: `mcpcassette finish failed: ${(done.stderr ?? "").trim()}` };
    return { report, reports: [report], stopped };
  }
  const outcome = JSON.parse(done.stdout);
  const reports = outcome.processes ?? [];
  return { report: combine(outcome.cassette, reports), reports, stopped };
}

/** The reports of a scope's processes as one report. */
function combine(cassette, reports) {
  if (reports.length === 0) return null;
  if (reports.length === 1) return reports[0];
  const label = (i) => `(server process ${i + 1} of ${reports.length}) `;
  const combined = { cassette, mode: reports[0].mode, finished: reports.every((r) => r.finished), exit_code: 0 };
  const errors = [];
  for (const [i, report] of reports.entries()) {
    combined.exit_code = Math.max(combined.exit_code, disconnectedAsAsked(report) ? 0 : (report.exit_code ?? 0));
    if (report.error) errors.push(label(i) + report.error);
    for (const key of ["misses", "unanswered", "answer_mismatches", "unused", "unused_cases"]) {
      const items = (report[key] ?? []).map((item) =>
        key === "misses" && item && typeof item === "object" ? { ...item, text: label(i) + (item.text ?? "") } : item,
      );
      combined[key] = [...(combined[key] ?? []), ...items];
    }
    combined.misses_not_kept = (combined.misses_not_kept ?? 0) + (report.misses_not_kept ?? 0);
  }
  if (errors.length > 0) combined.error = errors.join("\n");
  const faults = combineFaults(reports.map((r) => r.faults).filter(Boolean));
  if (faults) combined.faults = faults;
  return combined;
}

function oneLine(message) {
  if (!message || typeof message !== "object") return JSON.stringify(message);
  const params = message.params === undefined ? "" : ` ${JSON.stringify(message.params)}`;
  const text = `${message.method ?? "(response)"}${params}`;
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * What went wrong, as a message for a failing test; `null` when the run
 * went well (or never started: `report` is null).
 */
export function failureMessage(report, options = {}) {
  if (!report) return null;
  const cassette = report.cassette ?? "the cassette";
  if (!report.finished) {
    return (
      `mcpcassette: the run for ${cassette} had not finished ${options.waitedMs ? `${options.waitedMs} ms ` : ""}after the test: ` +
      `close the client (await client.close()) before the test ends, so that mcpcassette stops and writes its report`
    );
  }
  // A `disconnect` fault ends the run with its exit status, as asked.
  const code = disconnectedAsAsked(report) ? 0 : (report.exit_code ?? 0);
  if (code === 0 && !report.error) return null;
  const parts = [];
  if (report.error) {
    parts.push(`mcpcassette (mode ${report.mode ?? "?"}, cassette ${cassette}) failed: ${report.error}`);
  }
  const misses = report.misses ?? [];
  if (misses.length > 0 || report.misses_not_kept) {
    const total = misses.length + (report.misses_not_kept ?? 0);
    parts.push(`mcpcassette: ${total} request(s) had no recorded answer in ${cassette} (mode ${report.mode}):`);
    for (const miss of misses) parts.push(miss.text ?? JSON.stringify(miss, null, 2));
    if (report.misses_not_kept) parts.push(`(${report.misses_not_kept} more not kept in the report)`);
  }
  const unanswered = report.unanswered ?? [];
  if (unanswered.length > 0) {
    parts.push(
      `mcpcassette: ${unanswered.length} request(s) were never answered: the interaction that matched each was recorded without a response; re-record it:\n` +
        unanswered.map((u) => `  id ${JSON.stringify(u.id)} (#${u.interaction} ${u.label ?? ""})`).join("\n"),
    );
  }
  const mismatches = report.answer_mismatches ?? [];
  if (mismatches.length > 0 && code !== 0) {
    parts.push(
      `mcpcassette: the client answered ${mismatches.length} replayed request(s) differently from the recording:\n` +
        mismatches.map((m) => `  #${m.interaction} ${m.method}\n${m.diff ?? ""}`).join("\n"),
    );
  }
  const unused = report.unused ?? [];
  const unusedCases = report.unused_cases ?? [];
  const unusedFaults = report.faults?.unused ?? [];
  const nothingElse = parts.length === 0;
  if (nothingElse && (unused.length > 0 || unusedCases.length > 0)) {
    const lines = unused.map((u) => `  #${u.interaction} ${oneLine(u.message)}`);
    for (const c of unusedCases) lines.push(`  case ${JSON.stringify(c)}`);
    parts.push(`mcpcassette: --fail-on-unused: recorded interactions in ${cassette} were never used:\n${lines.join("\n")}`);
  }
  if (nothingElse && unusedFaults.length > 0) {
    const rules = report.faults.rules ?? [];
    const lines = unusedFaults.map((i) => `  ${rules[i] ?? `#${i}`}`);
    parts.push(`mcpcassette: --fail-on-unused: fault rules never fired (replaying ${cassette}):\n${lines.join("\n")}`);
  }
  if (parts.length === 0) parts.push(`mcpcassette: the run for ${cassette} exited with code ${code}`);
  return parts.join("\n\n");
}

/** Throws an Error with `failureMessage(report)` when there is one. */
export function assertReport(report) {
  const message = failureMessage(report);
  if (message) {
    const error = new Error(message);
    error.report = report;
    throw error;
  }
}
