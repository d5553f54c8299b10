import type { ChildProcess } from "node:child_process";

/** A mode of `mcpcassette run --mode`. */
export type Mode = "auto" | "once" | "new-episodes" | "all" | "none" | "passthrough";
/** A mode as resolved for a run (`auto` resolved to `none` or `once`). */
export type ResolvedMode = Exclude<Mode, "auto">;

export const MODES: readonly Mode[];
/** Platforms (`${process.platform}-${process.arch}`) with a published binary package. */
export const SUPPORTED_PLATFORMS: readonly string[];

/** `@mcpcassette/${platform}-${arch}`: the package holding the binary. */
export function platformPackage(platform?: string, arch?: string): string;
/** `mcpcassette`, or `mcpcassette.exe` on Windows. */
export function binaryName(platform?: string): string;

/**
 * The path of the mcpcassette binary: `MCPCASSETTE_BIN` when set, else the
 * binary of the installed platform package. Throws an Error naming the
 * missing package and the platform when there is none.
 */
export function binaryPath(options?: { env?: NodeJS.ProcessEnv; platform?: string; arch?: string }): string;

/** `CI` set and not empty, `0` or `false` (any case), or `TF_BUILD` set. */
export function isCI(env?: NodeJS.ProcessEnv): boolean;

/**
 * The mode to pass as `--mode`: `options.mode`, else `MCPCASSETTE_MODE` of
 * `options.env` (default `process.env`), else `none` in CI and `once`
 * elsewhere. Throws on an unknown mode.
 */
export function resolveMode(options?: { mode?: Mode | string; env?: NodeJS.ProcessEnv }): ResolvedMode;

/**
 * One fault rule (docs/faults.md): selectors (`method`, `name`, `uri`,
 * `when`, `nth`, `times`, `probability`, `seed`, `session`) and exactly one
 * fault kind (`error`, `tool_error`, `delay`, `hang`, `disconnect`,
 * `malformed`, `http`, `drop_notifications`, `tools_changed`,
 * `prompts_changed`, `resources_changed`, `mutate`). Checked by
 * `mcpcassette run`, which names the JSON pointer of a bad one.
 */
export interface FaultRule {
  method?: string;
  name?: string;
  uri?: string;
  when?: unknown;
  nth?: number;
  times?: number;
  probability?: number;
  seed?: number;
  session?: number;
  error?: { code: number; message: string; data?: unknown };
  tool_error?: string;
  delay?: number | { ms: number } | { min: number; max: number } | { median: number; sigma: number; max: number };
  hang?: true;
  disconnect?: true | { after?: number; exit?: number };
  malformed?: true | "not_json" | "not_jsonrpc" | "truncated";
  http?: number | { status: number; retry_after?: number; body?: unknown };
  drop_notifications?: true | string[];
  tools_changed?: { remove?: string[]; change?: Record<string, Record<string, unknown>> };
  prompts_changed?: { remove?: string[]; change?: Record<string, Record<string, unknown>> };
  resources_changed?: { remove?: string[]; change?: Record<string, Record<string, unknown>> };
  mutate?: { op: "replace" | "remove" | "add"; path: string; value?: unknown }[];
  [key: string]: unknown;
}

/** A faults overlay: a list of rules, or `{seed, faults}` (the format of `run --faults FILE`). */
export type Faults = FaultRule[] | { seed?: number; faults: FaultRule[] };

/** What a faults overlay did (a report's `faults`). */
export interface FaultsSummary {
  /** Each rule, as a few words (`#0 tools/call name search nth 2: error -32000: …`). */
  rules: string[];
  /** The faults that fired, in order. */
  fired: { fault: number; kind: string; session: number; request: string; id: unknown; did: string }[];
  fired_not_kept: number;
  /** The indexes of the rules that never fired. */
  unused: number[];
  /** Requests a `hang` held, and whether the client cancelled each (as a client whose time-out fired does). */
  hung: { fault: number; request: string; id: unknown; cancelled: boolean }[];
  /** The exit status a `disconnect` ended the replay with (stdio), or null. */
  disconnected: number | null;
}

export interface CommonOptions {
  /** The cassette file (relative to the working directory). */
  cassette: string;
  /** Default: `resolveMode()` (MCPCASSETTE_MODE, then CI detection). */
  mode?: Mode;
  /** Where `run --report` writes; default a fresh temporary file. */
  reportPath?: string;
  /** `--fail-on-unused`: a replay that leaves recorded interactions unused fails. */
  failOnUnused?: boolean;
  /** More `run` options, e.g. `["--ignore", "/params/arguments/timestamp"]`. */
  extraArgs?: string[];
  /** The binary to run; default `binaryPath()`. */
  binary?: string;
  /**
   * Make the replay misbehave as these fault rules say (`run --faults`;
   * docs/faults.md). Replay only: throws at once when the run would
   * record (the cassette missing, or mode `all`/`new-episodes`).
   * `readFaults()` tells which fired.
   */
  faults?: Faults;
}

export interface StdioOptions extends CommonOptions {
  /** The server command, as you would give it to `StdioClientTransport`. */
  command: string;
  args?: string[];
  /** Passed to the transport as given (the SDK's default environment when omitted). */
  env?: Record<string, string>;
  cwd?: string;
  stderr?: "inherit" | "pipe" | "ignore" | "overlapped" | number;
  /** The folder the server's processes share (`run --scope`); default a new temporary one. */
  scopeDir?: string;
}

/** Parameters for `new StdioClientTransport(...)` (`@modelcontextprotocol/sdk`). */
export interface StdioParams {
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
  stderr?: StdioOptions["stderr"];
  /** Not enumerable; the scope folder, where every process writes its report (`readReport` and `finishRun` take it). */
  readonly reportPath: string;
  /** Not enumerable; the scope folder every process of the server joins. */
  readonly scopeDir: string;
  /** Not enumerable; the mcpcassette binary. */
  readonly binary: string;
  /** Not enumerable; the absolute cassette path. */
  readonly cassette: string;
  /** Not enumerable; the mode passed as `--mode`. */
  readonly mode: ResolvedMode;
  /** Not enumerable; the faults file passed as `--faults`, or null. */
  readonly faultsPath: string | null;
}

/**
 * Wraps a stdio server command in `mcpcassette run --mode M --cassette P
 * --scope DIR -- COMMAND ARGS...`: every process a client starts with it
 * records into (or replays from) the one cassette. Throws at once when
 * the mode is `none` and the cassette does not exist.
 */
export function stdio(options: StdioOptions): StdioParams;

export interface HttpOptions extends CommonOptions {
  /** The Streamable HTTP server to record; not needed when it only replays. */
  upstream?: string;
  /** Default `127.0.0.1:0`. */
  listen?: string;
  /** The environment of `mcpcassette run` (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** `inherit` (default): its stderr is copied to this process's; `pipe`: only kept (`handle.stderr`). */
  stderr?: "inherit" | "pipe";
  /** How long to wait for the URL (default 15000 ms). */
  startTimeoutMs?: number;
}

export interface HttpHandle {
  /** Where to point `StreamableHTTPClientTransport`. */
  readonly url: string;
  readonly cassette: string;
  readonly mode: ResolvedMode;
  readonly reportPath: string;
  /** The faults file passed as `--faults`, or null. */
  readonly faultsPath: string | null;
  readonly process: ChildProcess;
  /** What it wrote on stderr so far. */
  readonly stderr: string;
  /** Stops it (SIGTERM; SIGKILL after `timeoutMs`, default 10000) and resolves to its final report. */
  close(options?: { timeoutMs?: number }): Promise<Report>;
}

/**
 * Starts `mcpcassette run` over Streamable HTTP (`--upstream URL --listen
 * 127.0.0.1:0`, or replay only without `upstream`) and resolves once it
 * prints its URL.
 */
export function http(options: HttpOptions): Promise<HttpHandle>;

export interface Miss {
  method: string;
  params?: unknown;
  reason?: string;
  closest?: unknown[];
  fixes?: string[];
  /** The full human report, as stderr shows it. */
  text: string;
  [key: string]: unknown;
}

/** The JSON `mcpcassette run --report` writes. */
export interface Report {
  cassette: string;
  mode: ResolvedMode;
  /** `false` while it runs. */
  finished: boolean;
  /** The run's process id (in the report written at its start). */
  pid?: number;
  /** 0 ok, 1 a miss (or unused with --fail-on-unused), 2 an error. */
  exit_code?: number;
  /** A recording. */
  recorded?: boolean;
  /** Why a run failed (exit code 2). */
  error?: string;
  misses?: Miss[];
  misses_not_kept?: number;
  unused?: { interaction: number; message: { method?: string; params?: unknown; [key: string]: unknown } }[];
  unused_cases?: unknown[];
  answer_mismatches?: { interaction: number; method: string; diff?: string; [key: string]: unknown }[];
  unanswered?: { id: unknown; interaction: number; label?: string }[];
  /** What the faults overlay did (a run with faults). */
  faults?: FaultsSummary;
  [key: string]: unknown;
}

/**
 * Reads the report; `null` when there is none (never started). While it
 * says `finished: false` it is read again, up to `timeoutMs` (default
 * 5000); then the unfinished report is returned.
 */
export function readReport(path: string, options?: { timeoutMs?: number; intervalMs?: number }): Promise<Report | null>;

/**
 * What the faults overlay of a run did: from the parameters `stdio()`
 * returned (every process of the server, waited for up to `timeoutMs`,
 * default 5000; close the client first), the handle `http()` resolved to
 * (stopped first: its report is final only then), a report path, or a
 * report. Throws when there is no report, or the run had no faults.
 */
export function readFaults(
  target: StdioParams | HttpHandle | Report | string,
  options?: { timeoutMs?: number },
): Promise<FaultsSummary>;

/**
 * Waits for the final report of a run whose client should be closing. If
 * the run is still going after `graceMs` (default 1000; the client was not
 * closed, e.g. the test threw first), stops it with SIGTERM (the process
 * the report names in `pid`) and waits up to `timeoutMs` (default 5000)
 * for its report.
 */
export function finishRun(
  reportPath: string | StdioParams,
  options?: { graceMs?: number; timeoutMs?: number },
): Promise<{ report: Report | null; stopped: boolean; reports?: Report[] }>;

/**
 * Every process of a `stdio()` server (its scope folder): waits for them
 * (stopping any still running after `graceMs` with SIGTERM), runs
 * `mcpcassette finish --scope`, and resolves to every process's report in
 * start order, and all of them as one (`report`) for `failureMessage`.
 */
export function finishScope(
  scopeDir: string,
  options?: { graceMs?: number; timeoutMs?: number; binary?: string },
): Promise<{ report: Report | null; stopped: boolean; reports: Report[] }>;

/**
 * What went wrong, for a failing test: each miss's full text, requests
 * never answered, unused interactions (with --fail-on-unused), the error.
 * `null` when all is well or `report` is null.
 */
export function failureMessage(report: Report | null, options?: { waitedMs?: number }): string | null;

/** Throws an Error (with `.report`) carrying `failureMessage(report)`, if any. */
export function assertReport(report: Report | null): void;
