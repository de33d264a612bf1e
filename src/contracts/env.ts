// The environment interface (Gymnasium-style reset/step). One module per environment kind
// implements it; the runtime only sees these types. Tasks are generated (or served) by id, and
// an env instance is isolated: every episode of a group gets its own.
import type { SignalValue } from "./signals.js";
import type { ToolCall } from "./tool-calls.js";

export type Signals = Readonly<Record<string, SignalValue>>;

/** A chat message of a task's prompt (a dataset row written as messages). */
export interface PromptMessage {
  readonly role: "system" | "user" | "assistant";
  readonly content: string;
}

export interface Observation {
  /** Text shown to the model: the task on reset, a tool's output on step. */
  readonly text: string;
  /**
   * On reset only: the task as chat messages instead of one user message (`text` then repeats
   * their text, for logs). A system message among them replaces the harness's system prompt.
   */
  readonly messages?: readonly PromptMessage[];
  /** The env's state signals after this step (declared with scope: state). */
  readonly signals: Signals;
}

export interface StepResult extends Observation {
  /** The task itself ended (goal reached, finish called, failure by the task's rules). */
  readonly terminated: boolean;
}

export interface EnvInstance {
  reset(): Promise<Observation>;
  step(call: ToolCall): Promise<StepResult>;
  /**
   * A turn without a tool call is the episode's final answer, for envs that score answers (a
   * dataset task): the env scores `text` (the turn without its end-of-turn token) and the
   * episode ends. Envs without it get "no tool call found" as an observation instead.
   */
  finalAnswer?(text: string): Promise<Signals>;
  /** Outcome signals (scope: outcome), read once when the episode ends. */
  outcome(): Promise<Signals>;
  close(): Promise<void>;
}

/** An env failed (crashed, server unreachable): not the policy's fault; excluded and counted. */
export class EnvError extends Error {
  constructor(
    message: string,
    readonly kind: "crash" | "timeout" | "protocol" | "unavailable" = "crash",
  ) {
    super(message);
  }
}

/** What every env kind's configuration carries; the plan's env entries (PlanEnv) are these. */
export interface EnvConfig {
  readonly kind: string;
}

export interface EnvKind<E extends EnvConfig = EnvConfig> {
  readonly kind: E["kind"];
  /** A fresh, isolated instance for one episode of task `task`. */
  create(env: E, task: number, seed: number): Promise<EnvInstance>;
  /** Words the embedded model's tokenizer needs for this env (deterministic). */
  vocabulary(env: E): readonly string[];
  /** An optimal action sequence for a task, for SFT cold start; undefined when unknown. */
  walkthrough?(env: E, task: number): Promise<readonly ToolCall[] | undefined>;
  /**
   * Before anything trains: read and check what the env needs (data, verifiers) and start its
   * helper processes. An EnvError here refuses the run, its message naming the file or row.
   */
  provision?(env: E, context: EnvProvisionContext): Promise<void>;
  /** After the run: stop the helper processes `provision` started (never throws). */
  shutdown?(): Promise<void>;
  /**
   * What this machine lacks to run `env` as its plan asks, checked at run start before anything
   * else: a refusal stops the run, a warning is printed. Absent: nothing to check.
   */
  hostCheck?(env: E): Promise<HostCheck>;
}

/** A tool the plan offers the model for an env: an OpenAI function definition's inside. */
export interface DeclaredTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}

export interface EnvProvisionContext {
  /** The env's name in the plan. */
  readonly name: string;
  /** The plan's tools of this env (the contract a server's own tool list is compared with). */
  readonly tools: readonly DeclaredTool[];
  /** Where the env may keep files of the run (a failed verifier's traceback): the run directory. */
  readonly runDir: string;
  readonly log: (line: string) => void;
  /** Episodes the run plays at once (rollout.concurrency): calls a kind serves from a pool (verifier workers) need no more; absent: 1. */
  readonly concurrency?: number;
}

/** A kind's verdict on this machine (EnvKind.hostCheck): each a message with its fix, or absent. */
export interface HostCheck {
  readonly refusal?: string;
  readonly warning?: string;
}
