import type { FaultsSummary, HttpHandle, HttpOptions, Report, StdioOptions, StdioParams } from "./index.js";

export type { FaultRule, Faults, FaultsSummary, HttpHandle, Mode, Report, ResolvedMode, StdioParams } from "./index.js";
export { binaryPath, failureMessage, finishRun, isCI, readFaults, readReport, resolveMode } from "./index.js";

export interface CassetteOption {
  /**
   * The cassette. Default: `<test dir>/cassettes/<test file stem>/<test
   * name>.json`, the test name being its describe blocks and its own name
   * joined with `--`, made safe for a file name (a second default cassette
   * in one test gets `-2`, …). An absolute path is used as is; a relative
   * name goes under `<test dir>/cassettes/` (`.json` added when it has no
   * extension).
   */
  cassette?: string;
  /** How long to wait after the test for the final report (default 5000 ms). Stdio only. */
  reportTimeoutMs?: number;
}

export type VitestStdioOptions = Omit<StdioOptions, "cassette"> &
  CassetteOption & {
    /** Names the server's cassette `<test>.<name>.json` (a test with several servers). */
    name?: string;
  };
export type VitestHttpOptions = Omit<HttpOptions, "cassette"> & CassetteOption;

export const cassette: {
  /**
   * Parameters for `new StdioClientTransport(...)` that run the server
   * through mcpcassette with this test's cassette. Throws at once in mode
   * `none` when the cassette is missing. When the test finishes it waits
   * for the report and fails the test with the miss report (or the error).
   * Close the client before the test ends.
   */
  stdio(options: VitestStdioOptions): StdioParams;
  /**
   * Starts mcpcassette over Streamable HTTP with this test's cassette; it
   * is stopped when the test finishes, which fails with the miss report.
   */
  http(options: VitestHttpOptions | string | URL): Promise<HttpHandle>;
  /**
   * What the faults overlay of one of this test's servers did
   * (`readFaults`): the parameters `stdio()` returned (close the client
   * first), or the handle of `http()` (stopped first).
   */
  faults(target: StdioParams | HttpHandle | Report | string, options?: { timeoutMs?: number }): Promise<FaultsSummary>;
  /** The path this test's next default cassette (or the cassette `name`) would have. */
  path(name?: string): string;
};

/** A test name as the file name of its cassette. */
export function sanitizeTestName(name: string): string;
/** `tools.test.ts` → `tools`. */
export function testFileStem(file: string): string;
