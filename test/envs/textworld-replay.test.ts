// `arl replay` of a real-TextWorld run (docs/envs.md, "Replaying a run"): w2-o3-q4 games made by
// TextWorld 1.7.0's generator (std/envs/textworld), builtin:tiny cold-started on their
// walkthroughs so that it types commands, one iteration of GRPO with the text_action harness; then
// every recorded episode is played again command by command in a fresh TextWorld game and must
// answer identically, and the episodes replayed include commands the env executed (tool calls),
// not only resets. Needs TextWorld in .venv (npm run setup:envs; CI installs it).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { envLibraryPythonCandidates } from "../../src/contracts/python.js";
import { readBuffer } from "../../src/episode/buffer.js";
import { runArl } from "../helpers/cli.js";
import { skipTitle } from "../helpers/skip-reporter.js";
import { embeddedTrainerFlag } from "../helpers/plans.js";

const python = envLibraryPythonCandidates()[0] ?? "python3";
const skip = spawnSync(python, ["-c", "import textworld"], { stdio: "ignore" }).status !== 0 && !process.env.CI;
const TEXTWORLD_NEED = "needs textworld in .venv: npm run setup:envs, which builds its jericho with gcc";

// The shipped TextWorld example (experiments/textworld/w2-o3-q4.arl) cut to one iteration on 4 games.
const SPEC = `import "std/algorithms" as algo
import "std/envs/textworld" as tw

experiment tw_replay {
  seed: 0
  policy { model: "builtin:tiny", sampling { temperature: 1.0, max_new_tokens: 24 } }
  env games extends tw.w2_o3_q4 {
    seeds: [1, 2, 3, 4]
    split { train: 0.75, test: 0.25 }
  }
  harness { tools: games.tools, format: text_action, max_turns: 6, max_response_tokens: 24, on_budget: truncate }
  reward { success: outcome.success }
  algorithm extends algo.grpo {
    group_size: 2
    reduction: token_mean
    advantage { baseline: leave_one_out }
    optimizer { lr: 5e-3 }
    kl { coef: 0.0 }
  }
  rollout { tasks_per_batch: 2, iterations: 1, concurrency: 4, sft { demos: 3, epochs: 20, batch: 3, lr: 1e-2 } }
  eval { split: test, every: 1, tasks: 1, k: [1], before_training: false }
  resources { backend: local }
}
`;

describe.skipIf(skip)(skipTitle("arl replay of a real-TextWorld run", skip, TEXTWORLD_NEED), () => {
  const saved = { cache: process.env.ARL_ENV_CACHE, python: process.env.ARL_ENVS_PYTHON };
  afterAll(() => {
    for (const [name, value] of [
      ["ARL_ENV_CACHE", saved.cache],
      ["ARL_ENVS_PYTHON", saved.python],
    ] as const)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });

  it("replays every episode of a run on generated games identically, commands the env executed included", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "arl-tw-replay-"));
    writeFileSync(path.join(cwd, "spec.arl"), SPEC);
    // The env host reads its game cache and Python from the process environment.
    process.env.ARL_ENV_CACHE = path.join(cwd, "cache");
    process.env.ARL_ENVS_PYTHON = python;
    const run = await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], { cwd });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const variant = path.join("runs", "tw_replay", "default");
    const runDir = path.join(variant, readdirSync(path.join(cwd, variant))[0]!);

    const { records } = readBuffer(path.join(cwd, runDir, "buffer.arlbuf"));
    const episodes = records.filter((r) => r.transcript !== undefined);
    expect(episodes.length).toBe(4);
    // The cold start taught the model to type commands: episodes whose commands TextWorld executed.
    const stepped = episodes.filter((r) => r.transcript!.exchanges.some((e) => e.op === "step"));
    expect(stepped.length, "episodes with at least one command the env executed").toBeGreaterThan(0);

    const replay = await runArl(["replay", runDir], { cwd });
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    const lines = replay.stdout.match(/^iteration 1, episode \d .*: identical \((\d+) exchanges with the env, .*$/gm);
    expect(lines).toHaveLength(episodes.length);
    // An exchange count above 2 (the reset and the outcome) is an episode whose commands were replayed.
    const counts = lines!.map((l) => Number(/identical \((\d+) exchanges/.exec(l)![1]));
    expect(counts.filter((n) => n > 2).length).toBe(stepped.length);
    expect(replay.stdout).toContain(
      `replayed ${episodes.length} episodes of tw_replay/default: ${episodes.length} identical, 0 diverged\n`,
    );
  }, 400_000);
});
