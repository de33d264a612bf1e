// The preflight through `arl run`: on the embedded trainer (builtin:tiny, dist/) the recomputed
// log-probs reproduce the sampled ones, preflight.json records every check and the report shows
// them; with a trainer double that returns its log-probs one position early (a token shift) and a
// dual clip that leaves negative advantages without a gradient, the run stops after its SFT cold
// start and before its first RL step, naming both checks and their numbers, with no train_step
// after the cold start's, no checkpoint after 0 and no resume hint.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { PreflightReport } from "../../src/runtime/preflight/batch.js";
import { runArl } from "../helpers/cli.js";
import { COUNTER_SIGNALS_AND_TOOLS, counterEnvScript, scriptedTrainerScript } from "../helpers/plans.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const embedded = path.join(repo, "dist", "trainer", "embedded", "main.js");

function spec(rollout: string, extra: string): string {
  return `
experiment preflighted {
  seed: 3
  policy { model: "builtin:tiny?hidden=16&embed=8&key=8", sampling { max_new_tokens: 8 } }
  env counter {
    kind: subprocess
    command: ${JSON.stringify([process.execPath, counterEnvScript])}
    tasks: 12${COUNTER_SIGNALS_AND_TOOLS}
  }
  harness { max_turns: 2 }
  reward { success: outcome.success, progress: 0.5 * state.progress }
  algorithm { group_size: 2, advantage { baseline: leave_one_out } }
  rollout { tasks_per_batch: 2, concurrency: 4, iterations: 1${rollout} }
  eval { every: 100, tasks: 1, k: [1], before_training: false }
  ${extra}
}
`;
}

async function run(trainer: string, o: { rollout?: string; extra?: string; files?: Record<string, string> } = {}) {
  const cwd = mkdtempSync(path.join(tmpdir(), "arl-preflight-"));
  writeFileSync(path.join(cwd, "spec.arl"), spec(o.rollout ?? "", o.extra ?? ""));
  for (const [name, text] of Object.entries(o.files ?? {})) writeFileSync(path.join(cwd, name), text);
  const result = await runArl(["run", "spec.arl", "--out", "runs", "--trainer-command", trainer], { cwd });
  const root = path.join(cwd, "runs", "preflighted", "default");
  const dir = path.join(root, readdirSync(root)[0] ?? "");
  const report = JSON.parse(readFileSync(path.join(dir, "preflight.json"), "utf8")) as PreflightReport;
  return { ...result, cwd, dir, report };
}

describe("the preflight in arl run", () => {
  it("passes on the embedded trainer: every check in preflight.json, the run log and the report", async () => {
    const r = await run(`${process.execPath} ${embedded}`);
    expect(r.code).toBe(0);
    expect(r.report).toMatchObject({ passed: true, iteration: 1, sequences: 4 });
    expect(r.report.checks.map((c) => [c.check, c.status])).toEqual([
      ["logprobs_reproduce", "passed"],
      ["boundaries", "passed"],
      ["signs", "passed"],
    ]);
    const [logprobs, boundaries, signs] = r.report.checks;
    // float32 on one machine: the recomputation differs from sampling by rounding only.
    expect(logprobs!.numbers.max_abs_log_ratio).toBeLessThan(1e-5);
    expect(logprobs!.numbers.tolerance).toBe(1e-3);
    expect(logprobs!.numbers.targets).toBe(r.report.targets);
    expect(boundaries!.numbers).toMatchObject({
      misplaced_targets: 0,
      untrained_end_of_turn_tokens: 0,
      groups: 2,
      mixed_groups: 0,
      targets_generated: r.report.targets,
    });
    expect(signs!.numbers.equal_rewards_max_gradient).toBe(0);
    expect(signs!.numbers.positive_past_clip_max_gradient).toBe(0);
    expect(signs!.numbers.negative_past_clip_min_gradient).toBeGreaterThan(0);
    expect(r.stdout).toMatch(
      /preflight logprobs_reproduce: passed; max \|log ratio\| \S+ over \d+ generated targets \(tolerance 0\.001\)/,
    );
    const markdown = readFileSync(path.join(r.dir, "report.md"), "utf8");
    expect(markdown).toContain("## Preflight");
    expect(markdown).toContain("| logprobs_reproduce | passed | max \\|log ratio\\| ");
    expect(readFileSync(path.join(r.dir, "report.html"), "utf8")).toContain('<section id="preflight">');
  });

  it("stops a run with shifted log-probs and a dual clip at or below 1 + clip.high after the cold start, before any RL step, naming both checks and their numbers", async () => {
    const trainLog = path.join(mkdtempSync(path.join(tmpdir(), "arl-preflight-log-")), "train.jsonl");
    const records = `${JSON.stringify({
      messages: [
        { role: "user", content: "count" },
        { role: "assistant", content: "step" },
      ],
    })}\n`;
    const trainer = `/usr/bin/env DOUBLE_SHIFTED_LOGPROBS=1 DOUBLE_TRAIN_LOG=${trainLog} ${process.execPath} ${scriptedTrainerScript}`;
    // A dual clip at 1.1 under clip.high 0.2 leaves nothing to pull a negative-advantage token back: signs fails too.
    const r = await run(trainer, {
      rollout: ', sft { data: "records.jsonl" }',
      extra: "algorithm.clip.dual: 1.1",
      files: { "records.jsonl": records },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("arl run: preflight check 'logprobs_reproduce' failed: max |log ratio|");
    expect(r.stderr).toMatch(/at token \d+ of sequence \d+ \(counter task \d+, group \d+, sample \d+\): sampled -?\d/);
    expect(r.stderr).toContain(
      "the recomputed log-probs are one position early (recomputed[k-1] matches sampled[k], max |log ratio| 0): a token shift",
    );
    expect(r.stderr).toContain("the usual causes: a token shift");
    expect(r.stderr).toContain("the run stopped before its first optimizer step (no weight changed)");
    expect(`${r.stdout}${r.stderr}`).not.toContain("resume with");
    expect(r.report.passed).toBe(false);
    expect(r.stderr).toContain("arl run: preflight check 'logprobs_reproduce' failed");
    expect(r.stderr).toContain("preflight check 'signs' failed: ");
    expect(r.stderr).toContain(
      "  - clip.dual 1.1 is not above 1 + clip.high (1.2): a negative-advantage token whose ratio is past the clip gets no gradient at all",
    );
    // Every check ran on the same batch: the double ends every turn with its end-of-turn token, a target.
    expect(r.report.checks.map((c) => c.status)).toEqual(["failed", "passed", "failed"]);
    expect(r.report.checks[1]!.numbers.end_of_turn_tokens).toBeGreaterThan(0);
    expect(r.report.checks[1]!.numbers.untrained_end_of_turn_tokens).toBe(0);
    // The cold start's one step is the only train_step; checkpoint 0 is its, and nothing after it.
    expect(readFileSync(trainLog, "utf8").trim().split("\n")).toHaveLength(1);
    expect(readdirSync(path.join(r.dir, "checkpoints"))).toEqual(["iteration-00000"]);
    expect(JSON.parse(readFileSync(path.join(r.dir, "state.json"), "utf8"))).toMatchObject({
      iteration: 0,
      sftDone: true,
    });
    expect(
      existsSync(path.join(r.dir, "metrics.jsonl")) ? readFileSync(path.join(r.dir, "metrics.jsonl"), "utf8") : "",
    ).toBe("");
  });
});
