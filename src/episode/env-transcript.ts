// What an episode asked of its env and what the env answered, in order: the reset, each tool call
// executed (its name and arguments) with the observation, signals and termination it got, a final
// answer, the outcome, and an env error where one ended the episode. Recorded with the episode in
// the token buffer (buffer.ts, `env`) so that `arl replay` can play the same calls into a fresh
// instance of the same env, task and seed and compare every answer (src/replay/).
import {
  EnvError,
  type EnvInstance,
  type Observation,
  type PromptMessage,
  type Signals,
  type StepResult,
} from "../contracts/env.js";
import type { ToolCall } from "../contracts/tool-calls.js";
import type { SignalSource } from "./rewards.js";

/** One exchange with the env. `error`: the call failed with an EnvError (the episode ended there). */
export type EnvExchange =
  | {
      readonly op: "reset";
      readonly text?: string;
      readonly messages?: readonly PromptMessage[];
      readonly signals?: Signals;
      readonly error?: EnvFault;
    }
  | {
      readonly op: "step";
      readonly call: ToolCall;
      readonly text?: string;
      readonly signals?: Signals;
      readonly terminated?: boolean;
      readonly error?: EnvFault;
      /** No answer had come when the episode ended (the harness stopped waiting at the tool's timeout_s). */
      readonly unanswered?: true;
    }
  | { readonly op: "final_answer"; readonly answer: string; readonly signals?: Signals; readonly error?: EnvFault }
  | { readonly op: "outcome"; readonly signals?: Signals; readonly error?: EnvFault };

export interface EnvFault {
  readonly kind: EnvError["kind"];
  readonly message: string;
}

/** A signal snapshot the rewards read: the env's signals and the episode's counters at that point. */
export interface SignalSnapshot {
  readonly env: Signals;
  readonly episode: Readonly<Record<string, number | boolean>>;
}

/** An episode's env transcript: the seed its instance was created with, its exchanges, and the signal snapshots its rewards were computed from. */
export interface EnvTranscript {
  readonly seed: number;
  readonly exchanges: readonly EnvExchange[];
  /** The harness's states (before each turn and after the last) and its final signals, as the rewards read them. */
  readonly states?: readonly SignalSnapshot[];
  readonly final?: SignalSnapshot;
}

/** The episode counters a reward can read (harness.ts EpisodeSignals; not imported: the harness imports the buffer, which imports this). */
const EPISODE_COUNTERS: readonly string[] = [
  "turns",
  "tool_calls",
  "invalid_calls",
  "tokens",
  "aborted",
  "truncated",
  "terminated",
];

/** The data of a signal source (env signals by the names it reports, episode counters by name). */
export function signalSnapshot(source: SignalSource): SignalSnapshot {
  const env: Record<string, Signals[string]> = {};
  for (const name of source.reported?.() ?? []) {
    const value = source.env(name);
    if (value !== undefined) env[name] = value;
  }
  const episode: Record<string, number | boolean> = {};
  for (const name of EPISODE_COUNTERS) {
    const value = source.episode(name);
    if (value !== undefined) episode[name] = value;
  }
  return { env, episode };
}

const fault = (error: unknown): EnvFault | undefined =>
  error instanceof EnvError ? { kind: error.kind, message: error.message } : undefined;

/**
 * Wraps an env instance so that every exchange is written down as it completes. `end()` freezes
 * the transcript when the episode is over: a step still running then (the harness stopped waiting
 * for it) stays `unanswered`, whatever it answers later.
 */
export class RecordingEnv implements EnvInstance {
  private readonly exchanges: EnvExchange[] = [];
  private frozen: EnvExchange[] | undefined;
  readonly finalAnswer?: (text: string) => Promise<Signals>;

  constructor(
    private readonly inner: EnvInstance,
    readonly seed: number,
  ) {
    if (inner.finalAnswer) {
      const answer = inner.finalAnswer.bind(inner);
      this.finalAnswer = (text) =>
        this.note({ op: "final_answer", answer: text }, answer(text), (signals) => ({ signals }));
    }
  }

  reset(): Promise<Observation> {
    return this.note({ op: "reset" }, this.inner.reset(), (o) => ({
      text: o.text,
      ...(o.messages ? { messages: o.messages } : {}),
      signals: o.signals,
    }));
  }

  step(call: ToolCall): Promise<StepResult> {
    return this.note(
      { op: "step", call: { name: call.name, arguments: call.arguments } },
      this.inner.step(call),
      (r) => ({ text: r.text, signals: r.signals, terminated: r.terminated }),
    );
  }

  outcome(): Promise<Signals> {
    return this.note({ op: "outcome" }, this.inner.outcome(), (signals) => ({ signals }));
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** The transcript as it stood when the episode ended. */
  end(): EnvTranscript {
    this.frozen ??= this.exchanges.map((e) =>
      e.op === "step" && e.text === undefined && e.error === undefined ? { ...e, unanswered: true as const } : e,
    );
    return { seed: this.seed, exchanges: this.frozen };
  }

  private async note<T>(
    input: EnvExchange,
    answer: Promise<T>,
    fields: (value: T) => Record<string, unknown>,
  ): Promise<T> {
    const index = this.exchanges.push(input) - 1;
    const set = (exchange: EnvExchange) => {
      if (!this.frozen) this.exchanges[index] = exchange;
    };
    try {
      const value = await answer;
      set({ ...input, ...fields(value) });
      return value;
    } catch (error) {
      const f = fault(error);
      if (f) set({ ...input, error: f });
      throw error;
    }
  }
}
