#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm ci` via `prepare`).
import { fileURLToPath } from "node:url";

// A closed pipe (`arl check | head`) is the reader's choice, not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
}

let runCli;
try {
  ({ runCli } = await import("../dist/cli/main.js"));
} catch (error) {
  // No dist/ (never built) or no node_modules: say how to install, not where the import failed.
  if (error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
  const root = fileURLToPath(new URL("..", import.meta.url));
  process.stderr.write(
    `arl: cannot start: ${error.message.split("\n")[0]}\nRun 'npm ci' in ${root} (it installs the dependencies and builds dist/), or 'npm run build' after changing the sources.\n`,
  );
  process.exit(2);
}
process.exitCode = await runCli(process.argv.slice(2));
