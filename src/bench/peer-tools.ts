// The run loop against a peer on multi-turn work: an episode is K calls of one tool and then an
// answer. ARL runs a dataset task with its built-in `lookup` tool (`arl run` on the PyTorch
// trainer); TRL 1.16 runs the same rows through GRPOTrainer's `environment_factory` (one
// environment class whose method is the tool); the floor is a plain PyTorch loop that generates
// each turn, calls the tool, scores and steps. One file, runtime-gpu/bench/tool_peer_env.py,
// holds the tool's answers and the reward for every side (ARL's veRL verifier); TRL and the floor
// are runtime-gpu/bench/tool_side_by_side.py.
//
// A random tiny Qwen3 makes no calls, so ARL's own supervised cold start first teaches it the
// Qwen3 call format on generated chat records (prompt, K calls with their results, the answer);
// every side starts from that checkpoint. Before any timing, a gate runs a short run of each side
// and counts the episodes with exactly K well-formed calls followed by an answer: below 90% on
// any side the section refuses its timing rows, since the sides would not be doing the same
// turns. The timing then follows the single-turn section (peer.ts): sides interleaved over rounds,
// each figure the median of steps 2..N, CPU time of each side's whole process tree, a ratio
// refused when a side's rewards were all equal in a group.

import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { at } from "../contracts/checked.js";
import { mean } from "../rl/stats.js";
import { RUNTIME_GPU_DIR } from "../contracts/python.js";
import { readBuffer } from "../episode/buffer.js";
import { pythonWithTorch } from "../trainer/launch.js";
import type { RunDirectory } from "../runtime/run-dir.js";
import { roundOrder, type BenchResult, type BenchSection } from "./harness.js";
import { arlSteps, notTheWork, PEER_GOALS, ratioRows, sideBySideSteps, sideRow, type Steps } from "./peer.js";
import { MODEL_MAKER, peerTraining, writeTinyQwen3 } from "./peer-setup.js";

const STEPS = 11;
const ROUNDS = 3;
/** Training steps of each side's gate run (its episodes are counted, its times are not). */
const GATE_STEPS = 2;
/** The share of a side's gate episodes that must make exactly K well-formed calls and then answer. */
export const GATE_SHARE = 0.9;

/** The work of one step: `prompts` prompts x `group` episodes, each K calls then an answer, a turn up to `turnTokens` tokens. */
export interface ToolWork {
  readonly calls: number;
  readonly group: number;
  readonly prompts: number;
  readonly turnTokens: number;
  readonly lr: number;
  readonly clip: number;
  readonly gradClip: number;
  readonly temperature: number;
}
export const TOOL_WORK: ToolWork = {
  calls: 2,
  group: 4,
  prompts: 4,
  turnTokens: 32,
  lr: 1e-5,
  clip: 0.2,
  gradClip: 1,
  // Below the cold start's 1 (its loss fits the distribution at the plan's temperature): the
  // format's rare wrong tokens become rarer while the answer's digits still vary within a group.
  temperature: 0.7,
};

/** The cold start that teaches the format: ARL's `rollout.sft` on the generated records. */
export const TOOL_COLD_START = { records: 64, epochs: 14, batch: 8, lr: 0.02 };

const TOOL_SIDE_BY_SIDE = path.join(RUNTIME_GPU_DIR, "bench/tool_side_by_side.py");
const TOOL_ENV = path.join(RUNTIME_GPU_DIR, "bench/tool_peer_env.py");

/** The tool as ARL shows it to Qwen3's template (its definition in the plan); tool_peer_env.py's TOOL_DEFINITION. */
export const LOOKUP_TOOL = {
  type: "function",
  function: {
    name: "lookup",
    description: "Look up an entry by its key; an unknown key lists the keys there are.",
    parameters: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      additionalProperties: false,
      properties: { key: { description: "The entry's key.", type: "string" } },
      required: ["key"],
      type: "object",
    },
  },
} as const;

/** The same tool as TRL shows it: the schema transformers derives from LookupEnv.lookup's signature and docstring. */
export const TRL_LOOKUP_TOOL = {
  type: "function",
  function: {
    name: "lookup",
    description: "Look up an entry by its key; an unknown key lists the keys there are.",
    parameters: {
      type: "object",
      properties: { key: { type: "string", description: "The entry's key." } },
      required: ["key"],
    },
    return: { type: "string" },
  },
} as const;

/** One row: the keys to look up, their entries, and the sum the answer should be. */
export interface LookupRow {
  readonly prompt: string;
  readonly answer: number;
  readonly facts: Readonly<Record<string, string>>;
  readonly split: "train" | "test";
}

const KEYS = "abcdefgh";

/** `count` rows, each K keys of numbers to look up and sum; the last quarter held out. */
export function lookupRows(count: number, calls: number = TOOL_WORK.calls): LookupRow[] {
  if (calls < 1 || calls > KEYS.length) throw new Error(`peer tools: K must be 1 to ${KEYS.length}, got ${calls}`);
  const keys = KEYS.slice(0, calls).split("");
  return Array.from({ length: count }, (_, i) => {
    const values = keys.map((_, k) => 1 + ((7 * i + 13 * k + 5 * i * k) % 90));
    return {
      prompt: `Look up ${keys.join(" and ")}, then reply with their sum.`,
      answer: values.reduce((a, b) => a + b, 0),
      facts: Object.fromEntries(keys.map((key, k) => [key, String(at(values, k))])),
      split: i < (3 * count) / 4 ? "train" : "test",
    };
  });
}

/**
 * The cold start's chat records (docs/language.md, `sft.data`): for each train row, its prompt,
 * one assistant turn a key with a `lookup` call and the tool's result, then the sum as the answer.
 * The tool block is rendered from ARL's definition in every other record and from TRL's in the
 * rest (the two differ in key order and a few fields): a model this small learns its prompt
 * token by token, and each side must see a prompt it was taught on.
 */
export function sftRecords(rows: readonly LookupRow[]): string {
  const lines = rows
    .filter((r) => r.split === "train")
    .map((r, i) => {
      const messages: unknown[] = [{ role: "user", content: r.prompt }];
      for (const [key, value] of Object.entries(r.facts)) {
        messages.push({
          role: "assistant",
          content: "",
          tool_calls: [{ type: "function", function: { name: "lookup", arguments: { key } } }],
        });
        messages.push({ role: "tool", content: value });
      }
      messages.push({ role: "assistant", content: String(r.answer) });
      return JSON.stringify({ messages, tools: [i % 2 === 0 ? LOOKUP_TOOL : TRL_LOOKUP_TOOL] });
    });
  return `${lines.join("\n")}\n`;
}

const jsonLines = (rows: readonly unknown[]) => `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`;

/**
 * ARL's side: the dataset task with its built-in `lookup` tool, at most K + 1 turns of
 * `turnTokens` each, the final answer scored by tool_peer_env.py as a veRL verifier, one on-policy
 * step an iteration. With `coldStart`, the supervised cold start on sft.jsonl first (and RL's
 * rate so small that its one step leaves the cold-started weights as they are).
 */
export function toolPeerSpec(
  modelDir: string,
  iterations: number,
  w: ToolWork = TOOL_WORK,
  coldStart?: typeof TOOL_COLD_START,
): string {
  // The cold start fits the model's distribution at temperature 1, whatever RL samples at.
  const temperature = coldStart ? 1 : w.temperature;
  const sft = coldStart
    ? ` sft { data: "./sft.jsonl", epochs: ${coldStart.epochs}, batch: ${coldStart.batch}, lr: ${coldStart.lr}, heldout: 0 }`
    : "";
  return `import "std/envs/dataset" as dataset

experiment peer_tools {
  seed: 0
  policy { model: ${JSON.stringify(modelDir)}, dtype: float32, sampling { temperature: ${temperature}, top_p: 1.0, top_k: 0, max_new_tokens: ${w.turnTokens} } }
  env lookups extends dataset.lookup_task {
    data: "./lookups.jsonl"
    split_column: "split"
    lookup_column: "facts"
    scorer: verl
    verifier: "./tool_peer_env.py"
  }
  harness {
    max_turns: ${w.calls + 1}
    max_response_tokens: ${w.turnTokens}
    // Each turn's tokens appended as sampled, as TRL's tool loop does (it concatenates ids).
    context { history: exact }
  }
${peerTraining(w, coldStart ? 1e-12 : w.lr, iterations, sft)}
  allow {
    self-inclusive-baseline: "TRL's GRPO advantage, (r - mean) / std over the group, for the same work on both"
  }
}
`;
}

/** One episode as the gate counts it: its well-formed calls, and whether it ended in an answer. */
export interface ToolEpisode {
  readonly calls: number;
  readonly answered: boolean;
}

/** A run's steps with its episodes, step by step. */
export interface ToolSteps extends Steps {
  readonly episodes: readonly (readonly ToolEpisode[])[];
}

/** ARL's episodes from a run's token buffer: its valid calls (a malformed one is not a call), and an answer when the episode finished. */
export function arlEpisodes(runDir: RunDirectory): ToolEpisode[][] {
  const byIteration = new Map<number, ToolEpisode[]>();
  for (const r of readBuffer(runDir.bufferPath).records) {
    const malformed = r.toolCalls.some((c) => !c.valid);
    const episode = {
      calls: malformed ? -1 : r.toolCalls.length,
      answered: r.end === "finished" && !malformed,
    };
    byIteration.set(r.iteration, [...(byIteration.get(r.iteration) ?? []), episode]);
  }
  return [...byIteration.keys()].sort((a, b) => a - b).map((i) => byIteration.get(i) ?? []);
}

/** The gate's verdict on one side: the share of its episodes with exactly K calls then an answer. */
export interface GateSide {
  readonly side: string;
  readonly exact: number;
  readonly episodes: number;
  readonly share: number;
  readonly passed: boolean;
}

/** Counts each side's episodes with exactly `calls` well-formed calls followed by an answer; passed at `min` or above. */
export function turnGate(
  sides: Readonly<Record<string, readonly (readonly ToolEpisode[])[]>>,
  calls: number,
  min: number = GATE_SHARE,
): { passed: boolean; sides: GateSide[] } {
  const verdicts = Object.entries(sides).map(([side, steps]) => {
    const all = steps.flat();
    const exact = all.filter((e) => e.calls === calls && e.answered).length;
    const share = all.length === 0 ? 0 : exact / all.length;
    return { side, exact, episodes: all.length, share, passed: all.length > 0 && share >= min };
  });
  return { passed: verdicts.every((v) => v.passed), sides: verdicts };
}

/** The gate's rows: one per side with its share (goal >= min), and why timing was refused when it was. */
export function gateRows(gate: ReturnType<typeof turnGate>, calls: number, min: number = GATE_SHARE): BenchResult[] {
  return gate.sides.map((s) => ({
    name: `gate: ${s.side}, episodes with exactly ${calls} calls then an answer`,
    value: s.share,
    goal: `>= ${min}`,
    met: s.passed,
    note: `${s.exact} of ${s.episodes}${s.passed ? "" : `: below ${min}, timing refused (the sides would not run the same turns)`}`,
  }));
}

/** TRL's or the floor's steps, from tool_side_by_side.py on `python`. */
function pythonToolSteps(
  python: string,
  side: "trl" | "floor",
  dir: string,
  modelDir: string,
  w: ToolWork,
  steps: number,
): ToolSteps {
  const out = path.join(dir, `${side}.json`);
  const args = [TOOL_SIDE_BY_SIDE, side, "--model", modelDir, "--data", path.join(dir, "lookups.jsonl")];
  args.push("--out", out, "--calls", String(w.calls), "--steps", String(steps));
  args.push("--group-size", String(w.group), "--prompts-per-step", String(w.prompts));
  args.push("--turn-tokens", String(w.turnTokens), "--temperature", String(w.temperature));
  args.push("--lr", String(w.lr), "--clip", String(w.clip), "--grad-clip", String(w.gradClip));
  const { steps: s, output } = sideBySideSteps<{ episodes: ToolEpisode[][] }>(
    python,
    args,
    dir,
    out,
    `peer tools bench: ${side}`,
    { TRL_EXPERIMENTAL_SILENCE: "1" },
  );
  return { ...s, episodes: output.episodes };
}

async function arlToolSteps(dir: string, spec: string, round: number, file: string): Promise<ToolSteps> {
  let episodes: ToolEpisode[][] = [];
  const steps = await arlSteps(dir, spec, round, file, (runDir) => {
    episodes = arlEpisodes(runDir);
  });
  return { ...steps, episodes };
}

/**
 * The cold start: a random tiny Qwen3 taught the call format by ARL's own `rollout.sft` on the
 * generated records (`arl run` of the spec with its cold start, one RL iteration at a rate of
 * 1e-12); the checkpoint's model and tokenizer files are copied to `dir/qwen3-sft`, which every
 * side starts from. Returns that directory.
 */
export async function toolColdStart(dir: string, python: string, w: ToolWork = TOOL_WORK): Promise<string> {
  const base = path.join(dir, "qwen3");
  writeTinyQwen3(python, base, "peer tools bench");
  const rows = lookupRows(TOOL_COLD_START.records, w.calls);
  writeFileSync(path.join(dir, "lookups.jsonl"), jsonLines(rows));
  writeFileSync(path.join(dir, "sft.jsonl"), sftRecords(rows));
  copyFileSync(TOOL_ENV, path.join(dir, "tool_peer_env.py"));
  let checkpoint: string | null = null;
  await arlSteps(dir, toolPeerSpec(base, 1, w, TOOL_COLD_START), 0, "cold-start.arl", (runDir) => {
    checkpoint = runDir.readState().checkpoint;
  });
  if (checkpoint === null) throw new Error("peer tools bench: the cold start committed no checkpoint");
  const out = path.join(dir, "qwen3-sft");
  mkdirSync(out, { recursive: true });
  // The model and its tokenizer; the trainer's own state (optimizer, RNG) stays behind.
  for (const name of readdirSync(checkpoint))
    if (/\.(json|safetensors|jinja|txt)$/.test(name) && name !== "trainer.json")
      copyFileSync(path.join(checkpoint, name), path.join(out, name));
  return out;
}

export interface ToolPeerRuns {
  readonly arl: readonly ToolSteps[];
  readonly trl: readonly ToolSteps[] | string;
  readonly floor: readonly ToolSteps[];
}

/** The share of a step's groups whose rewards must vary (advantages not all 0) for its run to be timed. */
const MIN_VARIED_GROUPS = 0.5;

/** Why a side's timed runs were not K calls then an answer in at least GATE_SHARE of their episodes. */
function offTurns(calls: number) {
  return (runs: readonly Steps[]): string | undefined => {
    for (const [round, s] of runs.entries()) {
      const episodes = (s as ToolSteps).episodes;
      if (!episodes) continue;
      const gate = turnGate({ run: episodes }, calls);
      const v = at(gate.sides, 0);
      if (!v.passed)
        return `round ${round + 1}: ${v.exact} of ${v.episodes} episodes made exactly ${calls} calls then answered`;
    }
    return undefined;
  };
}

/** The table: one row per side, then ARL's per-round ratios to TRL and to the floor. */
export function toolPeerRows(runs: ToolPeerRuns, calls: number): BenchResult[] {
  const share = (sides: readonly ToolSteps[]) => {
    const all = sides.flatMap((s) => s.episodes.flat());
    const varied = sides.flatMap((s) => s.varied);
    const groups = varied.length ? `; rewards varied in ${(100 * mean(varied)).toFixed(0)}% of the groups` : "";
    return `${all.filter((e) => e.calls === calls && e.answered).length} of ${all.length} episodes K calls then an answer${groups}`;
  };
  const rows = [sideRow("ARL: arl run, PyTorch trainer, dataset lookup tool", runs.arl, `float32; ${share(runs.arl)}`)];
  if (typeof runs.trl === "string") rows.push({ name: "TRL GRPOTrainer, environment_factory", note: runs.trl });
  else
    rows.push(
      sideRow(
        `TRL ${runs.trl[0]?.label ?? ""} GRPOTrainer, environment_factory`.replace("  ", " "),
        runs.trl,
        `float32, no gradient checkpointing; transformers generate, use_vllm=False; ${share(runs.trl)}`,
      ),
    );
  rows.push(
    sideRow(
      "compute floor: plain PyTorch loop",
      runs.floor,
      `float32; generate a turn, call the tool, ..., score, one step; ${share(runs.floor)}`,
    ),
  );
  // A taught model at temperature 0.7 answers some prompts alike in all G samples, so unlike the
  // single-turn section's reward, not every group can vary: refused below half of a step's groups.
  const why = (r: readonly Steps[]) => offTurns(calls)(r) ?? notTheWork(r, MIN_VARIED_GROUPS);
  if (typeof runs.trl !== "string")
    rows.push(...ratioRows("ARL / TRL, multi-turn", runs.arl, runs.trl, PEER_GOALS.trl, why));
  rows.push(...ratioRows("ARL / floor, multi-turn", runs.arl, runs.floor, PEER_GOALS.floor, why));
  return rows;
}

export interface ToolPeerOptions {
  readonly rounds?: number | undefined;
  readonly steps?: number | undefined;
}

export function toolPeerSection(options: ToolPeerOptions = {}): BenchSection {
  const w = TOOL_WORK;
  const rounds = options.rounds ?? ROUNDS;
  const steps = Math.max(2, options.steps ?? STEPS);
  const c = TOOL_COLD_START;
  return {
    name: "peer multi-turn: ARL's run loop against TRL's environment_factory and a plain PyTorch loop, K tool calls then an answer",
    describe: () => [
      `random tiny Qwen3 (2 layers, hidden 32, the real Qwen3 tokenizer and template) taught Qwen3's <tool_call> format by ARL's own cold start (rollout.sft on ${(3 * c.records) / 4} generated chat records, ${c.epochs} epochs, batch ${c.batch}, lr ${c.lr}, at temperature 1); every side starts from that checkpoint;`,
      `an episode: look up K = ${w.calls} keys with the one tool \`lookup\` (ARL: dataset.lookup_task's built-in tool; TRL: a GRPOTrainer environment_factory class; the floor: the same function), then answer their sum; at most ${w.calls + 1} turns of ${w.turnTokens} new tokens (TRL: its whole-completion budget to match); ${w.prompts} prompts x G ${w.group} a step at temperature ${w.temperature};`,
      "reward (runtime-gpu/bench/tool_peer_env.py, the same file on every side): the single-turn peer reward of the final answer (correct + 0.1 closeness + 0.1 brevity), 0 for an episode that never answers;",
      `gate before timing: a ${GATE_STEPS}-step run of each side, whose episodes must make exactly K well-formed calls and then answer in >= ${100 * GATE_SHARE}% (else the timing rows are refused); the timed runs are held to it too, and to rewards that vary in at least ${100 * MIN_VARIED_GROUPS}% of every step's groups;`,
      `AdamW lr ${w.lr}, no weight decay, grad clip ${w.gradClip}, clip ${w.clip}, no KL, token-mean loss over the generated tokens (tool results are context), one optimizer step a generation, all in float32 without gradient checkpointing;`,
      `${rounds} round${rounds === 1 ? "" : "s"}, each running every side once (${steps} steps a run; order reversed every other round); a side's figure in a round is the median of its steps 2..${steps}, a ratio the median over rounds; CPU time is each side's whole process tree.`,
    ],
    async run() {
      if (!existsSync(TOOL_SIDE_BY_SIDE) || !existsSync(MODEL_MAKER))
        return [
          { name: "peer multi-turn", note: "skipped: runtime-gpu/ is not here (run from a repository checkout)" },
        ];
      const python = pythonWithTorch();
      const has = (module: string) =>
        spawnSync(python, ["-c", `import ${module}`], { stdio: "ignore", timeout: 120_000 }).status === 0;
      if (!has("torch") || !has("transformers"))
        return [
          { name: "peer multi-turn", note: `skipped: no torch and transformers in ${python} (npm run setup:python)` },
        ];
      const dir = mkdtempSync(path.join(tmpdir(), "arl-bench-peer-tools-"));
      try {
        const model = await toolColdStart(dir, python, w);
        const trlSkipped = has("trl")
          ? undefined
          : `skipped: TRL is not installed in ${python} (npm run setup:python installs runtime-gpu/requirements.txt)`;
        const gated = {
          ARL: (await arlToolSteps(dir, toolPeerSpec(model, GATE_STEPS, w), 0, "gate.arl")).episodes,
          ...(trlSkipped ? {} : { TRL: pythonToolSteps(python, "trl", dir, model, w, GATE_STEPS).episodes }),
          floor: pythonToolSteps(python, "floor", dir, model, w, GATE_STEPS).episodes,
        };
        const gate = turnGate(gated, w.calls);
        const rows = gateRows(gate, w.calls);
        if (!gate.passed)
          return [...rows, { name: "ARL / TRL, multi-turn", note: "refused: the gate did not pass (rows above)" }];
        const sides = ["arl", "trl", "floor"] as const;
        const got: Record<(typeof sides)[number], ToolSteps[]> = { arl: [], trl: [], floor: [] };
        for (let round = 0; round < rounds; round++)
          for (const i of roundOrder(sides.length, round)) {
            const side = at(sides, i);
            if (side === "arl")
              got.arl.push(await arlToolSteps(dir, toolPeerSpec(model, steps, w), round, "tools.arl"));
            else if (side === "floor") got.floor.push(pythonToolSteps(python, "floor", dir, model, w, steps));
            else if (!trlSkipped) got.trl.push(pythonToolSteps(python, "trl", dir, model, w, steps));
          }
        return [...rows, ...toolPeerRows({ arl: got.arl, trl: trlSkipped ?? got.trl, floor: got.floor }, w.calls)];
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
