import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Fuzz and end-to-end suites spawn processes and parse large inputs: give them room on 2 cores.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Runs under test are hermetic: the cache of cold starts that `arl run` shares between runs
    // (~/.cache/arl/cold-starts) is off, in the workers and the arl processes they start, unless a
    // test names its own folder (test/runtime/sft-cache.test.ts).
    env: { ARL_COLD_START_CACHE: "off" },
    // The default output, then one line per reason tests were skipped for (a missing system package).
    reporters: ["default", "./test/helpers/skip-reporter.ts"],
  },
});
