import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Fuzz and end-to-end suites spawn processes and parse large inputs: give them room on 2 cores.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // The default output, then one line per reason tests were skipped for (a missing system package).
    reporters: ["default", "./test/helpers/skip-reporter.ts"],
  },
});
