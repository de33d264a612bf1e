// What the phases of a run share (RunContext) and what a caller hands executePlan and gets back.
// The context is built once by the provision phase; the phases read it and never replace it.
// What changes from iteration to iteration (the committed state, the trainer's policy version,
// the latest evaluation) is not in it: each phase takes those as inputs and returns them.
import type { EpisodeLanes } from "./lanes.js";
import { defined } from "../../contracts/checked.js";
import type { EnvKind } from "../../contracts/env.js";
import type { Plan, PlanEnv } from "../../plan/schema.js";
import type { ChatTemplateInfo, ConfigureParams, ConfigureResult } from "../../contracts/trainer-protocol.js";
import type { TrainerClient, TrainerCommand } from "../../trainer/protocol/client.js";
import type { TokenBuffer } from "../../episode/buffer.js";
import type { RunEngine } from "../../inference/engine/run-engine.js";
import type { Gateway } from "../../inference/gateway/contract.js";
import type { ModelContext } from "../../inference/gateway/prompt-bound.js";
import type { PoolTrainers } from "../../episode/cross-policy.js";
import type { Policy } from "../../episode/policy.js";
import type { RunDirectory, RunState } from "../run-dir.js";
import type { ToolCallValidator } from "../../contracts/tool-calls.js";
import type { SftData } from "./cold-start/data.js";
import type { RunStreams } from "./streams.js";
import type { RunTracking } from "./tracking.js";

export type EnvRegistry = ReadonlyMap<string, EnvKind>;

export interface RunOptions {
  readonly plan: Plan;
  readonly runDir: RunDirectory;
  readonly trainer: TrainerCommand;
  readonly envs: EnvRegistry;
  readonly log: (line: string) => void;
  readonly progress?: (status: ProgressStatus) => void;
  /** Set when the user asked to stop (SIGINT/SIGTERM): the run stops after committing. */
  readonly stop?: AbortSignal;
  /**
   * Set when the user asked to stop at once (a second Ctrl-C, SIGTERM): the trainers are killed,
   * the iteration in progress is abandoned (nothing committed is touched) and executePlan throws
   * a RunError with `halted` set.
   */
  readonly halt?: AbortSignal;
  /** Every trainer request's deadline in seconds (arl run --trainer-timeout); default: derived from the plan (trainerDeadlines). */
  readonly trainerTimeoutS?: number;
  /** The folder the plan's rollout.sft.data path is relative to (the run's data root, data-root.ts). */
  readonly dataRoot?: string;
  /**
   * `arl run --engine-command`: the command line each launched inference server runs in place of
   * the engine's own, with {port} {model} {plan} {seed} {index} filled in (docs/engines.md,
   * "Launch"); recorded in the manifest, not part of the plan.
   */
  readonly engineCommand?: string;
  /**
   * The folder of the cache of cold starts shared between runs (run/cold-start/cache.ts;
   * `arl run`: $ARL_COLD_START_CACHE, else ~/.cache/arl/cold-starts, off with
   * ARL_COLD_START_CACHE=off); absent: every cold start is trained. Not part of the plan: a
   * cached cold start is the one training would give.
   */
  readonly coldStartCache?: string;
  /** `arl run --engine-python`: the Python that runs a launched engine's own command (docs/engines.md, "Launch"); recorded like engineCommand. */
  readonly enginePython?: string;
}

export interface ProgressStatus {
  readonly iteration: number;
  readonly iterations: number;
  readonly success: number;
  readonly reward: number;
  readonly tokensPerSecond: number;
  readonly secondsPerIteration: number;
}

export interface RunSummary {
  readonly dir: string;
  readonly iterations: number;
  readonly stopped: boolean;
  /** Where a stopped run stopped when not after an iteration: "the cold start's step N". */
  readonly stoppedAt?: string;
  /** The watchdog ended the run (rollout.watchdog.on_no_signal: stop): why. Complete, not resumable. */
  readonly watchdogStop?: string;
  readonly lastEval?: Record<string, number>;
}

export class RunError extends Error {
  constructor(
    message: string,
    readonly stderrTail: readonly string[] = [],
    /** The user stopped the run at once (RunOptions.halt); what was committed is intact. */
    readonly halted = false,
    /**
     * Whether `arl run --resume` can carry the run on: true for a run interrupted or crashed
     * mid-way; false for a refusal that a resume would meet again (a plan error, a model or
     * configuration the trainer refuses), which is never told to resume.
     */
    readonly resumable = true,
  ) {
    super(message);
  }
}

/**
 * The run's first batch had nothing to train on (an env failed every episode of it): the run
 * fails, and its state says why. Resumable: a fixed env (a server started again) plays it again.
 */
export class TrainedOnNothingError extends RunError {}

/** A failure no resume can get past (the plan, or the trainer's refusal of it): fix the cause and start a new run. */
export function refusal(message: string, stderrTail: readonly string[] = []): RunError {
  return new RunError(message, stderrTail, false, false);
}

/** The error of a run stopped at once (RunOptions.halt) while `state` was the committed one. */
export function haltedError(state: RunState): RunError {
  return new RunError(
    `stopped at once: iteration ${state.iteration + 1} was abandoned; ${state.iteration > 0 ? `iterations 1-${state.iteration} are committed and kept` : "no iteration had been committed yet"}`,
    [],
    true,
  );
}

/** One evaluation's summary: pass@k with its bootstrap interval (`pass@k`, `pass@k_low`, `pass@k_high`). */
export type EvalSummary = Record<string, number>;

/** The policy trainer's configuration as the run sent and got it (provision.ts). */
export interface TrainerConfiguration {
  readonly request: ConfigureParams;
  readonly result: ConfigureResult;
}

export interface RunContext {
  readonly plan: Plan;
  readonly runDir: RunDirectory;
  readonly envs: EnvRegistry;
  readonly log: (line: string) => void;
  readonly progress: ((status: ProgressStatus) => void) | undefined;
  /** The user's request to stop after the iteration in progress is committed. */
  readonly stop: AbortSignal | undefined;
  /** The policy's trainer, configured (and loaded from the checkpoint on resume). */
  readonly trainer: TrainerClient;
  /** The policy trainer's configure request and its answer. */
  readonly configuration: TrainerConfiguration;
  /** The cache of cold starts' folder (RunOptions.coldStartCache); undefined: off. */
  readonly coldStartCache: string | undefined;
  /** The current weights: evaluation episodes and the cold start's demonstrations (the inference servers with an engine). */
  readonly policy: Policy;
  /** What training episodes sample from: the behaviour snapshot under asynchronous rollout, else `policy` (with an engine: the servers, which serve the behaviour weights). */
  readonly rolloutPolicy: Policy;
  /** rollout.concurrency's lanes, shared by every batch in flight (asynchronous rollout may have several). */
  readonly lanes: EpisodeLanes;
  /** The inference servers that sample (resources.rollout.engine vllm or sglang); undefined: the trainer samples. */
  readonly engine: RunEngine | undefined;
  /** The pool models' trainers when cross-policy sampling is on. */
  readonly pool: PoolTrainers | undefined;
  readonly validator: ToolCallValidator;
  /** The policy tokenizer's end-of-turn ids (configure's stop_ids). */
  readonly stopIds: readonly number[];
  /** What configure reported of the policy's chat template (its defaults where it reported nothing). */
  readonly template: ChatTemplateInfo;
  readonly buffer: TokenBuffer;
  /** Every seeded random choice of the run loop, by what it decides. */
  readonly streams: RunStreams;
  /** rollout.sft.data's records, read and validated before the trainer is configured. */
  readonly sftData: SftData | undefined;
  /** The trackers metrics lines are copied to (plan.tracking; does nothing when none is on). */
  readonly tracking: RunTracking;
  /** The run's agent gateway (docs/gateway.md), started when the plan has agent envs. */
  readonly gateway: Gateway | undefined;
  /** What bounds an agent request's prompt: the model's context and its tokens' longest text (measured when the plan has agent envs). */
  readonly modelContext: ModelContext;
  /** The run's data root: where the plan's data files lie and agent programs run. */
  readonly dataRoot: string | undefined;
  /** The user's request to stop at once: agent programs in flight are stopped. */
  readonly halt: AbortSignal | undefined;
}

/** The plan's env names in the order every phase walks them. */
export function envNames(plan: Plan): string[] {
  return Object.keys(plan.envs).sort();
}

/** The plan's env `name`: one of envNames(plan), or the env of a task drawn from them. */
export function planEnv(plan: Plan, name: string): PlanEnv {
  return defined(plan.envs[name], `env '${name}' of the plan`);
}

/** The registered kind of `env`: checkRunnable refuses a plan whose kinds the registry lacks. */
export function envKindOf(envs: EnvRegistry, env: PlanEnv): EnvKind {
  return defined(envs.get(env.kind), `env kind '${env.kind}' in the registry`);
}
