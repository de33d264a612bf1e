// `arl run` end to end on real reasoning-gym (docs/env-libraries.md, "reasoning-gym"): the example
// spec experiments/envs/reasoning_gym.arl, a single-turn chain_sum task, trains builtin:tiny for 2
// iterations on the CPU through the env host (every reply answered or truncated, none an env
// error), and the run ends cleanly: the host, shared by every host library kind, stopped once.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { python, skipWithout } from "./host-library-support.js";

const arl = fileURLToPath(new URL("../../bin/arl.js", import.meta.url));
const spec = fileURLToPath(new URL("../../experiments/envs/reasoning_gym.arl", import.meta.url));

const skip = skipWithout("reasoning_gym");

describe.skipIf(skip)(
  skipTitle("arl run on real reasoning-gym", skip, "needs reasoning-gym in .venv: npm run setup:envs"),
  () => {
    it("trains builtin:tiny for 2 iterations on a single-turn chain_sum spec and exits 0", () => {
      const out = mkdtempSync(path.join(tmpdir(), "arl-rg-e2e-"));
      const run = spawnSync(process.execPath, [arl, "run", spec, "--out", out], {
        env: { ...process.env, ARL_ENVS_PYTHON: python },
        encoding: "utf8",
        timeout: 300_000,
      });
      const output = run.stdout + run.stderr;
      expect(run.status, output).toBe(0);
      expect(output).toMatch(/env 'sums': reasoning_gym .*prepared 16 tasks/);
      expect(output).not.toMatch(/ERR_STREAM_WRITE_AFTER_END|Unhandled/);
      const runDir = path.resolve(output.match(/run reasoning_gym_chain_sum\/default \(\w+\) in (\S+)/)![1]!);
      const metrics = readFileSync(path.join(runDir, "metrics.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { iteration: number; env_errors: number; end_reasons: Record<string, number> });
      expect(metrics.map((m) => m.iteration)).toEqual([1, 2]);
      for (const m of metrics) {
        expect(m.env_errors).toBe(0);
        // 2 tasks x 4 samples, each one turn: answered (finished) or cut at max_response_tokens.
        expect(m.end_reasons.finished! + m.end_reasons.truncated!).toBe(8);
      }
    }, 300_000);
  },
);
