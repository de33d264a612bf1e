// The run loop against a peer on the same work: wall time per GRPO training step of ARL's run loop
// (`arl run` of a single-turn dataset spec on the PyTorch trainer), of TRL's GRPOTrainer, and of a
// plain PyTorch loop that only generates, scores and steps (the compute floor). One random tiny
// Qwen3 with the real Qwen3 tokenizer (runtime-gpu/tests/hf_models.py), the same prompt rows, group
// size, completion budget, sampling, optimizer, learning rate and batch for all three; TRL and the
// floor are runtime-gpu/bench/grpo_side_by_side.py. Each runs STEPS steps in a process of its own,
// one after another; a row is the median of steps 2..STEPS (step 1 warms up), and its note the
// median CPU seconds a step (the trainer's and the orchestrator's, for ARL), which move less than
// wall time with the load of a shared machine.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { at } from "../contracts/checked.js";
import { PACKAGE_ROOT } from "../contracts/paths.js";
import { RUNTIME_GPU_DIR } from "../contracts/python.js";
import { Compiler } from "../compiler.js";
import { hasErrors } from "../diagnostics/diagnostic.js";
import { envKindsWithDataRoot } from "../envs/registry.js";
import { lowerModel } from "../plan/lower.js";
import { executePlan } from "../runtime/orchestrator.js";
import { RunDirectory } from "../runtime/run-dir.js";
import { pythonWithTorch, trainerCommand } from "../trainer/launch.js";
import { median, type BenchResult, type BenchSection } from "./harness.js";

const STEPS = 11;
/** The work of one step: PROMPTS prompts x GROUP samples, each up to MAX_NEW tokens. */
export const PEER_WORK = {
  group: 4,
  prompts: 4,
  maxNew: 16,
  lr: 1e-5,
  clip: 0.2,
  gradClip: 1,
  temperature: 1,
} as const;
const SIDE_BY_SIDE = path.join(RUNTIME_GPU_DIR, "bench/grpo_side_by_side.py");
const MODEL_MAKER = path.join(RUNTIME_GPU_DIR, "tests/hf_models.py");

/** `count` rows of sums, the last quarter held out: {"prompt", "answer", "split"} a line. */
export function sumRows(count: number): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const [a, b] = [1 + ((7 * i) % 50), 1 + ((13 * i + 5) % 50)];
    lines.push(
      JSON.stringify({
        prompt: `What is ${a} + ${b}? Reply with the number only.`,
        answer: a + b,
        split: i < (3 * count) / 4 ? "train" : "test",
      }),
    );
  }
  return `${lines.join("\n")}\n`;
}

/** ARL's side of the work: single turn, scored by the built-in `number` scorer, one on-policy step an iteration. */
export function peerSpec(modelDir: string, iterations: number): string {
  const w = PEER_WORK;
  return `import "std/envs/dataset" as dataset

experiment peer {
  seed: 0
  policy { model: ${JSON.stringify(modelDir)}, dtype: float32, sampling { temperature: ${w.temperature}, top_p: 1.0, top_k: 0, max_new_tokens: ${w.maxNew} } }
  env sums extends dataset.task {
    data: "./sums.jsonl"
    split_column: "split"
    scorer: number
  }
  harness { max_turns: 1, max_response_tokens: ${w.maxNew} }
  reward { correct: outcome.correct }
  algorithm {
    group_size: ${w.group}
    advantage { estimator: group, baseline: mean, normalize: std }
    clip { low: ${w.clip}, high: ${w.clip} }
    kl { coef: 0.0 }
    reduction: token_mean
    optimizer { lr: ${w.lr}, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0, grad_clip: ${w.gradClip} }
  }
  rollout { tasks_per_batch: ${w.prompts}, iterations: ${iterations}, concurrency: ${w.prompts * w.group} }
  eval { split: test, every: 1000, tasks: 1, k: [1], before_training: false }
  resources { backend: torch }
  allow {
    self-inclusive-baseline: "TRL's GRPO advantage, (r - mean) / std over the group, for the same work on both"
    history-unset-for-rewriting-template: "single turn: there are no earlier turns to render again"
  }
}
`;
}

/** CPU seconds used so far by this process's direct children (Linux /proc; undefined elsewhere). */
function childrenCpuSeconds(): number | undefined {
  if (process.platform !== "linux") return undefined;
  let total = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // After "pid (comm) ": state, ppid, ... utime and stime are the 12th and 13th fields; USER_HZ is 100.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === process.pid) total += (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

function selfCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

interface Steps {
  readonly seconds: readonly number[];
  readonly cpuSeconds?: readonly number[];
  readonly label?: string;
  /** ARL's: each iteration's seconds outside rollout, rewards and update (its commit: the checkpoint saved and fsynced, metrics, state). */
  readonly commitSeconds?: readonly number[];
}

/** ARL's steps: the plan run in this process (the orchestrator) with the PyTorch trainer. */
async function arlSteps(dir: string, modelDir: string): Promise<Steps> {
  const file = path.join(dir, "peer.arl");
  writeFileSync(file, peerSpec(modelDir, STEPS));
  const result = new Compiler().check(file);
  if (hasErrors(result.diagnostics) || !result.model)
    throw new Error(`peer bench: the spec does not compile: ${result.diagnostics.map((d) => d.message).join("; ")}`);
  const plan = at(lowerModel(result.model).plans, 0).plan;
  const runDir = RunDirectory.create(path.join(dir, "runs"), plan);
  const wallAt: number[] = [];
  const cpuAt: number[] = [];
  const cpuNow = () => {
    const children = childrenCpuSeconds();
    return children === undefined ? Number.NaN : children + selfCpuSeconds();
  };
  let [before, started] = [cpuNow(), performance.now()];
  await executePlan({
    plan,
    runDir,
    trainer: trainerCommand(plan),
    envs: envKindsWithDataRoot(dir),
    dataRoot: dir,
    log: () => undefined,
    // Called as each iteration is committed (its checkpoint saved, the one before removed): the
    // wall and CPU time since the one before, all that the run loop does for a step.
    progress: () => {
      const [now, cpu] = [performance.now(), cpuNow()];
      wallAt.push((now - started) / 1000);
      cpuAt.push(cpu - before);
      [before, started] = [cpu, now];
    },
  });
  // What of an iteration is neither rollout, rewards nor update: its commit in the step's path
  // (the checkpoint's copy, the wait for the one before to be durable, metrics, state).
  const commitSeconds = runDir.readMetrics().map((m) => {
    const t = m.time as { rollout_s: number; reward_s: number; update_s: number; total_s: number };
    return t.total_s - t.rollout_s - t.reward_s - t.update_s;
  });
  return { seconds: wallAt, commitSeconds, ...(cpuAt.every(Number.isFinite) ? { cpuSeconds: cpuAt } : {}) };
}

/** TRL's or the floor's steps, from grpo_side_by_side.py on `python`. */
function pythonSteps(python: string, mode: "trl" | "floor", dir: string, modelDir: string): Steps {
  const out = path.join(dir, `${mode}.json`);
  const w = PEER_WORK;
  const args = [
    SIDE_BY_SIDE,
    mode,
    "--model",
    modelDir,
    "--data",
    path.join(dir, "sums.jsonl"),
    "--out",
    out,
    "--steps",
    String(STEPS),
  ];
  args.push(
    "--group-size",
    String(w.group),
    "--prompts-per-step",
    String(w.prompts),
    "--max-new-tokens",
    String(w.maxNew),
  );
  args.push(
    "--temperature",
    String(w.temperature),
    "--lr",
    String(w.lr),
    "--clip",
    String(w.clip),
    "--grad-clip",
    String(w.gradClip),
  );
  const done = spawnSync(python, args, {
    cwd: dir,
    encoding: "utf8",
    timeout: 900_000,
    env: { ...process.env, PYTHONPATH: RUNTIME_GPU_DIR },
  });
  if (done.status !== 0)
    throw new Error(`peer bench: ${mode} failed (${done.status ?? done.signal}):\n${(done.stderr ?? "").slice(-3000)}`);
  const r = JSON.parse(readFileSync(out, "utf8")) as { seconds: number[]; cpu_seconds: number[]; trl?: string };
  return { seconds: r.seconds, cpuSeconds: r.cpu_seconds, ...(r.trl ? { label: r.trl } : {}) };
}

/** Median wall and CPU seconds over steps 2..N. */
function measured(s: Steps): { wall: number[]; cpu: number | undefined } {
  return { wall: s.seconds.slice(1), cpu: s.cpuSeconds ? median(s.cpuSeconds.slice(1)) : undefined };
}

/** The table: one row per loop, then ARL/TRL and ARL/floor against their goals. */
export function peerRows(arl: Steps, trl: Steps | string, floor: Steps): BenchResult[] {
  const row = (name: string, s: Steps, note: string): BenchResult => {
    const { wall, cpu } = measured(s);
    const ms = wall.map((x) => x * 1000);
    return {
      name,
      medianMs: median(ms),
      minMs: Math.min(...ms),
      maxMs: Math.max(...ms),
      runs: ms.length,
      note: `${cpu === undefined ? "" : `CPU ${(cpu * 1000).toFixed(0)} ms a step; `}${note}`,
    };
  };
  const ratio = (name: string, other: Steps, goal: number): BenchResult => {
    const [a, b] = [measured(arl), measured(other)];
    const value = median(a.wall) / median(b.wall);
    const cpu = a.cpu !== undefined && b.cpu !== undefined ? `; in CPU time ${(a.cpu / b.cpu).toFixed(2)}x` : "";
    return { name, value, unit: "x", goal: `<= ${goal}`, met: value <= goal, note: `wall time a step${cpu}` };
  };
  const commit = arl.commitSeconds
    ? `; of it the commit in the step's path (the checkpoint copied, the one before awaited, metrics, state) ${(median(arl.commitSeconds.slice(1)) * 1000).toFixed(0)} ms`
    : "";
  const rows = [row("ARL: arl run, PyTorch trainer", arl, `orchestrator and trainer${commit}`)];
  if (typeof trl === "string") rows.push({ name: "TRL GRPOTrainer", note: trl });
  else
    rows.push(
      row(`TRL ${trl.label ?? ""} GRPOTrainer`.replace("  ", " "), trl, "transformers generate, use_vllm=False"),
    );
  rows.push(row("compute floor: plain PyTorch loop", floor, "generate, score, one step; no framework"));
  if (typeof trl !== "string") rows.push(ratio("ARL / TRL", trl, 1.0));
  rows.push(ratio("ARL / floor", floor, 1.25));
  return rows;
}

export function peerSection(): BenchSection {
  const w = PEER_WORK;
  return {
    name: "peer: ARL's run loop against TRL's GRPOTrainer and a plain PyTorch loop, on the same GRPO work",
    describe: () => [
      `random tiny Qwen3 (2 layers, hidden 32, the real Qwen3 tokenizer and template); ${w.prompts} prompts x G ${w.group} a step, up to ${w.maxNew} new tokens at temperature ${w.temperature};`,
      `AdamW lr ${w.lr}, no weight decay, grad clip ${w.gradClip}, clip ${w.clip}, no KL, token-mean loss, one optimizer step a generation; ${STEPS} steps each, median of steps 2..${STEPS}.`,
      "ARL's step is commit to commit: it includes the resumable checkpoint every iteration commits (weights, AdamW state, tokenizer, fsynced; the trainer writes it while the next rollout generates); TRL (save_strategy no) and the floor save nothing.",
    ],
    async run() {
      if (!existsSync(SIDE_BY_SIDE) || !existsSync(MODEL_MAKER))
        return [{ name: "peer", note: "skipped: runtime-gpu/ is not here (run from a repository checkout)" }];
      const python = pythonWithTorch();
      const has = (module: string) =>
        spawnSync(python, ["-c", `import ${module}`], { stdio: "ignore", timeout: 120_000 }).status === 0;
      if (!has("torch") || !has("transformers"))
        return [{ name: "peer", note: `skipped: no torch and transformers in ${python} (npm run setup:python)` }];
      const dir = mkdtempSync(path.join(tmpdir(), "arl-bench-peer-"));
      try {
        const modelDir = path.join(dir, "qwen3");
        const made = spawnSync(python, [MODEL_MAKER, modelDir, "--arch", "qwen3", "--tokenizer", "qwen3"], {
          cwd: PACKAGE_ROOT,
          encoding: "utf8",
          timeout: 300_000,
        });
        if (made.status !== 0)
          throw new Error(`peer bench: could not write the model: ${(made.stderr ?? "").slice(-2000)}`);
        writeFileSync(path.join(dir, "sums.jsonl"), sumRows(64));
        const arl = await arlSteps(dir, modelDir);
        const trl = has("trl")
          ? pythonSteps(python, "trl", dir, modelDir)
          : `skipped: TRL is not installed in ${python} (npm run setup:python installs runtime-gpu/requirements.txt)`;
        const floor = pythonSteps(python, "floor", dir, modelDir);
        return peerRows(arl, trl, floor);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
