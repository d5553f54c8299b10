import { defineConfig } from "vitest/config";

// The suite itself: api.test.ts (the package's API and CLI) and
// driver.test.ts (runs `vitest run` on suites/ in child processes).
export default defineConfig({
  test: {
    include: ["*.test.ts"],
    exclude: ["suites/**", "scenarios/**", "node_modules/**"],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // The driver's scenarios build on each other, and the machine is small.
    fileParallelism: false,
  },
});
