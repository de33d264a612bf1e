// One probe episode of the env check, driven a call at a time so that two sessions can be
// stepped interleaved: create and reset, each action, the final answer where the env scores one,
// the outcome, close. Every call runs under a deadline past the env's own time limit, is timed,
// and its answer is checked for shape; what comes back is kept as a trace to compare.
import { EnvError, type EnvInstance, type EnvKind, type Observation, type Signals } from "../contracts/env.js";
import type { ToolCall } from "../contracts/tool-calls.js";
import type { PlanEnv } from "../plan/schema.js";

/** One answer of the env, as compared between episodes. */
export interface TraceEvent {
  /** "reset", "step 2", "answer", "outcome". */
  readonly at: string;
  readonly text?: string;
  readonly messages?: string;
  readonly signals: Signals;
  readonly terminated?: boolean;
}

/** A call that failed: raised, ran past its deadline, or answered something that is not an answer. */
export interface Fault {
  readonly at: string;
  readonly how: "raised" | "hung" | "malformed";
  readonly message: string;
}

export interface EpisodeSpec {
  readonly kind: EnvKind;
  readonly env: PlanEnv;
  readonly task: number;
  readonly seed: number;
  readonly actions: readonly ToolCall[];
  /** Text given as the final answer after the actions, for envs that score one; undefined: none. */
  readonly answer?: string;
  /** Seconds a reset, outcome or close may take before it counts as hung. */
  readonly callLimitS: number;
  /** Seconds the step calling a tool may take before it counts as hung. */
  readonly stepLimitS: (tool: string) => number;
}

/** Latencies of the calls, in milliseconds (a reset's from the instance's creation). */
export interface Latencies {
  readonly reset: number[];
  readonly step: number[];
}

class Hung extends Error {}

async function within<T>(promise: Promise<T>, seconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Hung()), seconds * 1000);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Why `signals` is not a signal map (an object of finite numbers, booleans and strings), or undefined. */
function signalsProblem(signals: unknown): string | undefined {
  if (typeof signals !== "object" || signals === null || Array.isArray(signals))
    return `its signals are ${JSON.stringify(signals)}, not an object`;
  for (const [name, value] of Object.entries(signals)) {
    if (typeof value === "number" && !Number.isFinite(value))
      return `its signal '${name}' is ${value}, not a finite number`;
    if (typeof value !== "number" && typeof value !== "boolean" && typeof value !== "string")
      return `its signal '${name}' is ${JSON.stringify(value)}, not a number, boolean or string`;
  }
  return undefined;
}

function observationProblem(o: unknown, step: boolean): string | undefined {
  if (typeof o !== "object" || o === null) return `it answered ${JSON.stringify(o)}, not an observation`;
  const obs = o as Partial<Observation> & { terminated?: unknown };
  if (typeof obs.text !== "string") return `its observation text is ${JSON.stringify(obs.text)}, not a string`;
  if (step && typeof obs.terminated !== "boolean")
    return `its 'terminated' is ${JSON.stringify(obs.terminated)}, not a boolean`;
  if (obs.messages !== undefined && !Array.isArray(obs.messages)) return "its messages are not a list";
  return signalsProblem(obs.signals);
}

const callText = (call: ToolCall): string => `${call.name} ${JSON.stringify(call.arguments)}`;

export class ProbeEpisode {
  readonly events: TraceEvent[] = [];
  fault: Fault | undefined;
  private instance: EnvInstance | undefined;
  private next = 0;
  private ended = false;

  constructor(
    private readonly spec: EpisodeSpec,
    private readonly latencies: Latencies,
  ) {}

  get done(): boolean {
    return this.ended;
  }

  /** Makes the next call; false once the episode has ended (closed, or failed). */
  async advance(): Promise<boolean> {
    if (this.ended) return false;
    const s = this.spec;
    try {
      if (!this.instance) {
        // A reset's latency counts the instance's creation: some kinds (the env host's) open and
        // reset the episode there, and answer reset() from what create() got.
        const start = performance.now();
        this.instance = await this.call("create", s.callLimitS, () => s.kind.create(s.env, s.task, s.seed));
        const reset = await this.call("reset", s.callLimitS, () => this.live().reset());
        this.latencies.reset.push(performance.now() - start);
        this.check("reset", observationProblem(reset, false));
        this.events.push({
          at: "reset",
          text: reset.text,
          ...(reset.messages ? { messages: JSON.stringify(reset.messages) } : {}),
          signals: reset.signals,
        });
        return true;
      }
      const last = this.events.at(-1);
      if (this.next < s.actions.length && last?.terminated !== true) {
        const action = s.actions[this.next++] as ToolCall;
        const at = `step ${this.next} (${callText(action)})`;
        const start = performance.now();
        const step = await this.call(at, s.stepLimitS(action.name), () => this.live().step(action));
        this.latencies.step.push(performance.now() - start);
        this.check(at, observationProblem(step, true));
        this.events.push({
          at: `step ${this.next}`,
          text: step.text,
          signals: step.signals,
          terminated: step.terminated,
        });
        return true;
      }
      if (
        s.answer !== undefined &&
        last?.terminated !== true &&
        this.live().finalAnswer &&
        !this.events.some((e) => e.at === "answer")
      ) {
        const instance = this.live();
        const signals = await this.call("the final answer", s.callLimitS, () =>
          (instance.finalAnswer as (text: string) => Promise<Signals>).call(instance, s.answer as string),
        );
        this.check("the final answer", signalsProblem(signals));
        this.events.push({ at: "answer", signals });
        return true;
      }
      const outcome = await this.call("outcome", s.callLimitS, () => this.live().outcome());
      this.check("outcome", signalsProblem(outcome));
      this.events.push({ at: "outcome", signals: outcome });
      await this.close();
      return false;
    } catch (error) {
      this.fault ??= faultOf(error);
      await this.close();
      return false;
    }
  }

  /** Closes the instance (once); a close that fails or hangs is this episode's fault. */
  async close(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    const instance = this.instance;
    if (!instance) return;
    try {
      await this.call("close", this.spec.callLimitS, () => instance.close());
    } catch (error) {
      this.fault ??= faultOf(error);
    }
  }

  private live(): EnvInstance {
    if (!this.instance) throw new Error("the probe episode has no instance");
    return this.instance;
  }

  private async call<T>(at: string, limitS: number, run: () => Promise<T>): Promise<T> {
    try {
      return await within(run(), limitS);
    } catch (error) {
      if (error instanceof Hung) throw new ProbeFault({ at, how: "hung", message: `no answer within ${limitS} s` });
      const kind = error instanceof EnvError ? ` (${error.kind})` : "";
      throw new ProbeFault({
        at,
        how: error instanceof EnvError && error.kind === "protocol" ? "malformed" : "raised",
        message: `${error instanceof Error ? error.message : String(error)}${kind}`,
      });
    }
  }

  private check(at: string, problem: string | undefined): void {
    if (problem !== undefined) throw new ProbeFault({ at, how: "malformed", message: problem });
  }
}

class ProbeFault extends Error {
  constructor(readonly fault: Fault) {
    super(fault.message);
  }
}

function faultOf(error: unknown): Fault {
  if (error instanceof ProbeFault) return error.fault;
  return { at: "the probe", how: "raised", message: error instanceof Error ? error.message : String(error) };
}

/** Plays `episodes` to their ends one call each in turn (one episode: alone). */
export async function playInterleaved(episodes: readonly ProbeEpisode[]): Promise<void> {
  while (episodes.some((e) => !e.done)) {
    for (const e of episodes) if (!e.done) await e.advance();
  }
}
