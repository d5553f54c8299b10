import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The framework tests (run by .ci/frameworks.sh from a copy beside the
// pinned node_modules, never from the source tree). With FW_DIRECT=1 the
// Vitest helper is swapped for direct.ts, which hands out the servers
// themselves: the live baseline, without mcpcassette.
const direct = process.env.FW_DIRECT === "1";

export default defineConfig({
  resolve: direct
    ? { alias: { "mcpcassette/vitest": fileURLToPath(new URL("./direct.ts", import.meta.url)) } }
    : {},
  test: {
    include: ["*.test.ts"],
    testTimeout: 30_000, // a test takes under 5 s
    hookTimeout: 60_000,
    // One test at a time: the guard's log of server starts is read per test.
    fileParallelism: false,
  },
});
