#!/usr/bin/env node
// The `mcpcassette` command: runs the platform binary with the same
// arguments, stdio inherited; its exit code (or signal) becomes ours.

import { spawn } from "node:child_process";
import os from "node:os";
import { binaryPath } from "../index.js";

let binary;
try {
  binary = binaryPath();
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });

// Signals sent to this process (kill PID, a test runner stopping us) go to
// the binary, which stops cleanly (writing its cassette or report).
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
const handlers = new Map();
for (const signal of forwarded) {
  const handler = () => {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  };
  handlers.set(signal, handler);
  process.on(signal, handler);
}

child.on("error", (error) => {
  process.stderr.write(`mcpcassette: cannot start ${binary}: ${error.message}\n`);
  process.exit(2);
});

child.on("exit", (code, signal) => {
  for (const [name, handler] of handlers) process.off(name, handler);
  if (signal) {
    // Die of the same signal, so our parent sees what the binary's would.
    process.kill(process.pid, signal);
    setTimeout(() => process.exit(128 + (os.constants.signals[signal] ?? 1)), 1000);
    return;
  }
  process.exit(code ?? 1);
});
