// The run loop against a peer on the same work: wall time per GRPO training step of ARL's run loop
// (`arl run` of a single-turn dataset spec on the PyTorch trainer), of TRL's GRPOTrainer, and of a
// plain PyTorch loop that only generates, scores and steps (the compute floor). One random tiny
// Qwen3 with the real Qwen3 tokenizer (runtime-gpu/tests/hf_models.py), the same prompt rows, group
// size, completion budget, sampling, optimizer, learning rate, batch and reward for all of them
// (one Python file, runtime-gpu/bench/peer_reward.py: ARL's veRL verifier, TRL's reward function
// and the floor's); TRL and the floor are runtime-gpu/bench/grpo_side_by_side.py. TRL runs twice:
// in float32 without gradient checkpointing (ARL's and the floor's numerics: the comparison) and
// with its own defaults (bf16 autocast, activation checkpointing). Every side runs STEPS steps in a
// run of its own, and the sides are interleaved over ROUNDS rounds (each round runs each side once,
// in the reverse order of the round before); a side's figure in a round is the median of its steps
// 2..STEPS (step 1 warms up), a ratio the median over rounds of the two sides' figures of the same
// round. A step is timed from the end of the step before to its own end, so everything the loop
// does for a step is inside (ARL's commit, TRL's batch fetch and logging), with the CPU seconds of
// the side's whole process tree beside. A ratio is refused when a side's rewards were all equal in
// some group of some step: its advantages, and with them its update, were not the same work.

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { at } from "../contracts/checked.js";
import { RUNTIME_GPU_DIR } from "../contracts/python.js";
import { Compiler } from "../compiler.js";
import { hasErrors } from "../diagnostics/diagnostic.js";
import { envKindsWithDataRoot } from "../envs/registry.js";
import { lowerModel } from "../plan/lower.js";
import { executePlan } from "../runtime/orchestrator.js";
import { RunDirectory } from "../runtime/run-dir.js";
import { pythonWithTorch, trainerCommand } from "../trainer/launch.js";
import { median, roundOrder, roundRatioRow, type BenchResult, type BenchSection } from "./harness.js";
import { MODEL_MAKER, peerTraining, writeTinyQwen3 } from "./peer-setup.js";

const STEPS = 11;
const ROUNDS = 3;
/** The work of one step: `prompts` prompts x `group` samples, each up to `maxNew` tokens (4 x 4 x 64 = 1,024). */
export interface PeerWork {
  readonly group: number;
  readonly prompts: number;
  readonly maxNew: number;
  readonly lr: number;
  readonly clip: number;
  readonly gradClip: number;
  readonly temperature: number;
}
export const PEER_WORK: PeerWork = {
  group: 4,
  prompts: 4,
  maxNew: 64,
  lr: 1e-5,
  clip: 0.2,
  gradClip: 1,
  temperature: 1,
};
const SIDE_BY_SIDE = path.join(RUNTIME_GPU_DIR, "bench/grpo_side_by_side.py");
const REWARD = path.join(RUNTIME_GPU_DIR, "bench/peer_reward.py");

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

/** ARL's side of the work: single turn, scored by the peer reward as a veRL verifier, one on-policy step an iteration. */
export function peerSpec(modelDir: string, iterations: number, w: PeerWork = PEER_WORK): string {
  return `import "std/envs/dataset" as dataset

experiment peer {
  seed: 0
  policy { model: ${JSON.stringify(modelDir)}, dtype: float32, sampling { temperature: ${w.temperature}, top_p: 1.0, top_k: 0, max_new_tokens: ${w.maxNew} } }
  env sums extends dataset.task {
    data: "./sums.jsonl"
    split_column: "split"
    scorer: verl
    verifier: "./peer_reward.py"
  }
  harness { max_turns: 1, max_response_tokens: ${w.maxNew} }
${peerTraining(w, w.lr, iterations)}
  allow {
    self-inclusive-baseline: "TRL's GRPO advantage, (r - mean) / std over the group, for the same work on both"
    history-unset-for-rewriting-template: "single turn: there are no earlier turns to render again"
  }
}
`;
}

/**
 * CPU seconds used so far by the process tree under `root` (Linux /proc; undefined elsewhere):
 * each process's own time and that of its children it has waited for, so a helper that ended
 * (an env host's worker) still counts.
 */
export function treeCpuSeconds(root: number = process.pid): number | undefined {
  if (process.platform !== "linux") return undefined;
  const stats = new Map<number, { ppid: number; ticks: number }>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // After "pid (comm) ": state, ppid, ...; utime, stime, cutime and cstime are the 12th to 15th fields. USER_HZ is 100.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      stats.set(Number(pid), {
        ppid: Number(fields[1]),
        ticks: [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0),
      });
    } catch {
      // The process ended between the listing and the read.
    }
  }
  const children = new Map<number, number[]>();
  for (const [pid, { ppid }] of stats) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  let ticks = 0;
  for (let todo = [root], pid = todo.pop(); pid !== undefined; pid = todo.pop()) {
    ticks += stats.get(pid)?.ticks ?? 0;
    todo.push(...(children.get(pid) ?? []));
  }
  return ticks / 100;
}

/** One run of one side: per step, its wall and CPU seconds, the fraction of groups whose rewards varied and the gradient norm. */
export interface Steps {
  readonly seconds: readonly number[];
  readonly cpuSeconds?: readonly number[];
  readonly varied: readonly number[];
  readonly gradNorm: readonly number[];
  readonly label?: string;
  /** What it computed in: the weights' dtype, bf16 autocast, gradient checkpointing (TRL and the floor say). */
  readonly settings?: { readonly dtype: string; readonly bf16: boolean; readonly gradient_checkpointing: boolean };
  /** ARL's: episodes that ended in an env error (a verifier that failed), which leave the update. */
  readonly envErrors?: number;
  /** ARL's: each iteration's seconds outside rollout, rewards and update (its commit: the checkpoint saved and fsynced, metrics, state). */
  readonly commitSeconds?: readonly number[];
}

/**
 * ARL's steps: the plan of `spec` (written to `dir/file`) run in this process (the orchestrator)
 * with the PyTorch trainer, in a run directory of the round's own; `ran` is given that directory
 * once the run ends (the token buffer, the run's state).
 */
export async function arlSteps(
  dir: string,
  spec: string,
  round: number,
  file = "peer.arl",
  ran?: (runDir: RunDirectory) => void,
): Promise<Steps> {
  writeFileSync(path.join(dir, file), spec);
  const result = new Compiler().check(path.join(dir, file));
  if (hasErrors(result.diagnostics) || !result.model)
    throw new Error(`peer bench: the spec does not compile: ${result.diagnostics.map((d) => d.message).join("; ")}`);
  const plan = at(lowerModel(result.model).plans, 0).plan;
  const runDir = RunDirectory.create(path.join(dir, `runs-${path.basename(file, ".arl")}-${round}`), plan);
  const wallAt: number[] = [];
  const cpuAt: number[] = [];
  const cpuNow = () => treeCpuSeconds() ?? Number.NaN;
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
  ran?.(runDir);
  const metrics = runDir.readMetrics();
  // What of an iteration is neither rollout, rewards nor update: its commit in the step's path
  // (the checkpoint's copy, the wait for the one before to be durable, metrics, state).
  const commitSeconds = metrics.map((m) => {
    const t = m.time as { rollout_s: number; reward_s: number; update_s: number; total_s: number };
    return t.total_s - t.rollout_s - t.reward_s - t.update_s;
  });
  return {
    seconds: wallAt,
    commitSeconds,
    varied: metrics.map((m) => m.varied_group_ratio as number),
    gradNorm: metrics.map((m) => m.grad_norm as number),
    envErrors: metrics.reduce((n, m) => n + (m.env_errors as number), 0),
    settings: { dtype: "float32", bf16: false, gradient_checkpointing: false },
    ...(cpuAt.every(Number.isFinite) ? { cpuSeconds: cpuAt } : {}),
  };
}

type PythonSide = "trl" | "trl-defaults" | "floor";

/** TRL's or the floor's steps, from grpo_side_by_side.py on `python`. */
function pythonSteps(
  python: string,
  side: PythonSide,
  dir: string,
  modelDir: string,
  work: PeerWork,
  steps: number,
): Steps {
  const out = path.join(dir, `${side}.json`);
  const w = work;
  const args = [
    SIDE_BY_SIDE,
    side === "floor" ? "floor" : "trl",
    "--model",
    modelDir,
    "--data",
    path.join(dir, "sums.jsonl"),
    "--reward",
    path.join(dir, "peer_reward.py"),
    "--out",
    out,
    "--steps",
    String(steps),
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
  if (side === "trl-defaults") args.push("--trl-defaults");
  return sideBySideSteps(python, args, dir, out, `peer bench: ${side}`).steps;
}

/**
 * One side of a peer side-by-side script (runtime-gpu/bench/*_side_by_side.py; `args` start with
 * the script) run on `python` in `dir`, its steps read from the JSON it writes to `out`; `what`
 * names the side in the error when it fails. Returns those steps and the whole JSON, for the
 * script's own keys.
 */
export function sideBySideSteps<Extra extends object = object>(
  python: string,
  args: readonly string[],
  dir: string,
  out: string,
  what: string,
  env: Readonly<Record<string, string>> = {},
): { steps: Steps; output: Extra } {
  const done = spawnSync(python, args, {
    cwd: dir,
    encoding: "utf8",
    timeout: 1_800_000,
    env: { ...process.env, PYTHONPATH: RUNTIME_GPU_DIR, ...env },
  });
  if (done.status !== 0)
    throw new Error(`${what} failed (${done.status ?? done.signal}):\n${(done.stderr ?? "").slice(-3000)}`);
  const r = JSON.parse(readFileSync(out, "utf8")) as Extra & {
    seconds: number[];
    cpu_seconds: number[];
    varied_group_ratio: number[];
    grad_norm: number[];
    settings: Steps["settings"];
    trl?: string;
  };
  const steps: Steps = {
    seconds: r.seconds,
    cpuSeconds: r.cpu_seconds,
    varied: r.varied_group_ratio,
    gradNorm: r.grad_norm,
    ...(r.settings ? { settings: r.settings } : {}),
    ...(r.trl ? { label: r.trl } : {}),
  };
  return { steps, output: r };
}

/** Median wall and CPU seconds of steps 2..N of one run. */
function measured(s: Steps): { wall: number; cpu: number | undefined } {
  return { wall: median(s.seconds.slice(1)), cpu: s.cpuSeconds ? median(s.cpuSeconds.slice(1)) : undefined };
}

/**
 * Why a side's runs were not the stated work (a failed verifier; in some step fewer than
 * `minVaried` of the groups with rewards that varied), or undefined when they were. No side skips
 * a group whose rewards are all equal (advantages 0): it costs the step the same, but a step
 * where most groups are such does little work.
 */
export function notTheWork(runs: readonly Steps[], minVaried = 1): string | undefined {
  for (const [round, s] of runs.entries()) {
    if (s.envErrors) return `${s.envErrors} episodes of round ${round + 1} ended in an env error`;
    if (s.varied.length < s.seconds.length)
      return `round ${round + 1} reported whether its rewards varied for ${s.varied.length} of its ${s.seconds.length} steps`;
    const step = s.varied.findIndex((v) => !(v >= minVaried));
    if (step >= 0)
      return `in step ${step + 1} of round ${round + 1} the rewards of ${(100 * (1 - at(s.varied, step))).toFixed(0)}% of the groups were all equal (advantages 0)${minVaried < 1 ? `; at most ${(100 * (1 - minVaried)).toFixed(0)}% may be` : ""}`;
  }
  return undefined;
}

export interface PeerRuns {
  readonly arl: readonly Steps[];
  /** One run a round each, or why the side was skipped. */
  readonly trl: readonly Steps[] | string;
  readonly trlDefaults: readonly Steps[] | string;
  readonly floor: readonly Steps[];
}

const settingsText = (s: Steps | undefined) =>
  s?.settings
    ? `${s.settings.dtype}${s.settings.bf16 ? ", bf16 autocast" : ""}${s.settings.gradient_checkpointing ? ", gradient checkpointing" : ""}`
    : "";

/** One side's row: its steps 2..N of every round pooled, its median CPU time a step and gradient norm. */
export function sideRow(name: string, sides: readonly Steps[], note: string): BenchResult {
  const ms = sides.flatMap((s) => s.seconds.slice(1).map((x) => x * 1000));
  const cpus = sides.map((s) => measured(s).cpu);
  const cpu = cpus.every((c): c is number => c !== undefined) ? median(cpus) : undefined;
  const grad = median(sides.flatMap((s) => s.gradNorm.slice(1)));
  const notes = [
    cpu === undefined ? "" : `CPU ${(cpu * 1000).toFixed(0)} ms a step (process tree)`,
    `grad norm ${grad.toPrecision(2)}`,
    note,
  ].filter(Boolean);
  return {
    name,
    medianMs: median(ms),
    minMs: Math.min(...ms),
    maxMs: Math.max(...ms),
    runs: ms.length,
    note: notes.join("; "),
  };
}

/** ARL's goals against each side, wall time a step: at most half of TRL's, within 10% of the compute floor. */
export const PEER_GOALS = { trl: 0.5, floor: 1.1 } as const;

/**
 * The rows of ARL's ratio to another side (wall, and CPU where both measured it), each the median
 * of the per-round ratios; refused when either side's runs were not the stated work.
 */
export function ratioRows(
  name: string,
  arl: readonly Steps[],
  other: readonly Steps[],
  goal?: number,
  why: (runs: readonly Steps[]) => string | undefined = notTheWork,
): BenchResult[] {
  const refused = why(arl) ?? why(other);
  if (refused) {
    const side = why(arl) ? "ARL" : name.replace(/^ARL \/ /, "");
    return [{ name, note: `refused: ${side}'s runs were not the same work: ${refused}` }];
  }
  const pairs = arl.map((a, round) => [measured(a), measured(at(other, round))] as const);
  const rows = [
    roundRatioRow(
      name,
      pairs.map(([a, b]) => a.wall / b.wall),
      {
        note: "wall time a step",
        ...(goal !== undefined ? { goal: `<= ${goal}`, met: (v: number) => v <= goal } : {}),
      },
    ),
  ];
  const cpuRatios = pairs.map(([a, b]) => (a.cpu === undefined || b.cpu === undefined ? Number.NaN : a.cpu / b.cpu));
  if (cpuRatios.every(Number.isFinite))
    rows.push(
      roundRatioRow(`${name}, CPU time`, cpuRatios, { note: "CPU time a step, each side's whole process tree" }),
    );
  return rows;
}

/** The table: one row per side (its steps 2..N of every round pooled), then the per-round ratios of ARL to each. */
export function peerRows(runs: PeerRuns): BenchResult[] {
  const row = sideRow;
  const ratios = (name: string, other: readonly Steps[], goal?: number) => ratioRows(name, runs.arl, other, goal);
  const commits = runs.arl.flatMap((s) => s.commitSeconds?.slice(1) ?? []);
  const commit = commits.length
    ? `; of it the commit in the step's path (the checkpoint copied, the one before awaited, metrics, state) ${(median(commits) * 1000).toFixed(0)} ms`
    : "";
  const trlName = (runsOf: readonly Steps[], what: string) =>
    `TRL ${runsOf[0]?.label ?? ""} GRPOTrainer, ${what}`.replace("  ", " ");
  const rows = [row("ARL: arl run, PyTorch trainer", runs.arl, `float32; orchestrator, trainer and env host${commit}`)];
  if (typeof runs.trl === "string") rows.push({ name: "TRL GRPOTrainer", note: runs.trl });
  else
    rows.push(
      row(
        trlName(runs.trl, "float32, no gradient checkpointing"),
        runs.trl,
        `${settingsText(runs.trl[0])}; transformers generate, use_vllm=False`,
      ),
    );
  if (typeof runs.trlDefaults === "string")
    rows.push({ name: "TRL GRPOTrainer, its defaults", note: runs.trlDefaults });
  else
    rows.push(
      row(
        trlName(runs.trlDefaults, "its defaults"),
        runs.trlDefaults,
        `${settingsText(runs.trlDefaults[0])}; transformers generate, use_vllm=False`,
      ),
    );
  rows.push(row("compute floor: plain PyTorch loop", runs.floor, "float32; generate, score, one step; no framework"));
  if (typeof runs.trl !== "string") rows.push(...ratios("ARL / TRL", runs.trl, PEER_GOALS.trl));
  if (typeof runs.trlDefaults !== "string") rows.push(...ratios("ARL / TRL with its defaults", runs.trlDefaults));
  rows.push(...ratios("ARL / floor", runs.floor, PEER_GOALS.floor));
  return rows;
}

export interface PeerOptions {
  /** Rounds of interleaved runs (`--rounds N`). */
  readonly rounds?: number | undefined;
  /** Training steps of each run (`--steps N`); at least 2, since the first is not counted. */
  readonly steps?: number | undefined;
  /** New tokens a sample may generate (`--tokens N`). */
  readonly tokens?: number | undefined;
}

export function peerSection(options: PeerOptions = {}): BenchSection {
  const w: PeerWork = { ...PEER_WORK, maxNew: options.tokens ?? PEER_WORK.maxNew };
  const rounds = options.rounds ?? ROUNDS;
  const steps = Math.max(2, options.steps ?? STEPS);
  return {
    name: "peer: ARL's run loop against TRL's GRPOTrainer and a plain PyTorch loop, on the same GRPO work",
    describe: () => [
      `random tiny Qwen3 (2 layers, hidden 32, the real Qwen3 tokenizer and template); ${w.prompts} prompts x G ${w.group} a step, up to ${w.maxNew} new tokens each (${w.prompts * w.group * w.maxNew} a step) at temperature ${w.temperature};`,
      `reward (runtime-gpu/bench/peer_reward.py, the same file on every side): correct + 0.1 closeness of the last number + 0.1 brevity, so every group's rewards differ and the update does work; a ratio is refused when a side's did not;`,
      `AdamW lr ${w.lr}, no weight decay, grad clip ${w.gradClip}, clip ${w.clip}, no KL, token-mean loss, one optimizer step a generation; ARL, TRL and the floor in float32 without gradient checkpointing; TRL also with its defaults (bf16 autocast where the device has it, gradient checkpointing);`,
      `${rounds} round${rounds === 1 ? "" : "s"}, each running every side once (${steps} steps a run; order reversed every other round); a side's figure in a round is the median of its steps 2..${steps}, a ratio the median over rounds of the same round's figures (min and max in their columns);`,
      "a step is timed from the end of the step before to its own end: ARL's from commit to commit (its resumable checkpoint every iteration, weights, AdamW state, tokenizer, fsynced, written while the next rollout generates), TRL's batch fetch and logging included (save_strategy no; the floor saves nothing); CPU time is each side's whole process tree.",
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
        writeTinyQwen3(python, modelDir, "peer bench");
        writeFileSync(path.join(dir, "sums.jsonl"), sumRows(64));
        writeFileSync(path.join(dir, "peer_reward.py"), readFileSync(REWARD));
        const trlSkipped = has("trl")
          ? undefined
          : `skipped: TRL is not installed in ${python} (npm run setup:python installs runtime-gpu/requirements.txt)`;
        const sides = ["arl", "trl", "trlDefaults", "floor"] as const;
        const got: Record<(typeof sides)[number], Steps[]> = { arl: [], trl: [], trlDefaults: [], floor: [] };
        for (let round = 0; round < rounds; round++) {
          for (const i of roundOrder(sides.length, round)) {
            const side = at(sides, i);
            if (side === "arl") got.arl.push(await arlSteps(dir, peerSpec(modelDir, steps, w), round));
            else if (side === "floor") got.floor.push(pythonSteps(python, "floor", dir, modelDir, w, steps));
            else if (!trlSkipped)
              got[side].push(pythonSteps(python, side === "trl" ? "trl" : "trl-defaults", dir, modelDir, w, steps));
          }
        }
        return peerRows({
          arl: got.arl,
          trl: trlSkipped ?? got.trl,
          trlDefaults: trlSkipped ?? got.trlDefaults,
          floor: got.floor,
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
