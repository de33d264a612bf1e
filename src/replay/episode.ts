// Replaying one recorded episode (`arl replay`): a fresh instance of its env, created for its task
// with its recorded seed, is asked what the episode asked (reset, each executed tool call in
// order, a final answer, the outcome) and every answer is compared with the recorded one:
// observation text, task messages, signals, termination, env errors. When every answer is the
// same, the rewards are computed again from the recorded signal snapshots, which the answers
// just reproduced, and compared with the rewards the run trained on.
import { EnvError, type EnvInstance, type EnvKind, type PromptMessage, type Signals } from "../contracts/env.js";
import type { EnvExchange, EnvFault, SignalSnapshot } from "../episode/env-transcript.js";
import type { TrajectoryRecord } from "../episode/buffer.js";
import { episodeSignalSource, toolsFor, type EpisodeSignals } from "../episode/harness.js";
import type { Plan } from "../plan/schema.js";
import { scoreSignals } from "../runtime/run/episodes.js";

/** Where a replay first differed from the record, with both sides as text. */
export interface Divergence {
  /** The exchange (1-based) and what was asked, or "rewards". */
  readonly where: string;
  /** What differs: "the observation", "signal 'x'", "reward term 'success'", ... */
  readonly what: string;
  readonly recorded: string;
  readonly replayed: string;
}

/** `exchanges` counts the exchanges with the env, or (`of: "program"`, an agent env) the model calls answered from the record. */
export type EpisodeReplay =
  | { readonly status: "identical"; readonly exchanges: number; readonly of: "env" | "program" }
  | {
      readonly status: "diverged";
      readonly exchanges: number;
      readonly of: "env" | "program";
      readonly divergence: Divergence;
    }
  | { readonly status: "cannot"; readonly reason: string };

/** What one exchange answered on replay: the exchange's fields, or the env's error. */
interface Answer {
  readonly text?: string;
  readonly messages?: readonly PromptMessage[];
  readonly signals?: Signals;
  readonly terminated?: boolean;
  readonly error?: EnvFault;
  readonly unanswered?: true;
}

const seconds = (s: number) =>
  new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), s * 1000).unref());

async function ask(
  instance: EnvInstance,
  exchange: EnvExchange,
  stepTimeoutS: (name: string) => number,
): Promise<Answer> {
  try {
    switch (exchange.op) {
      case "reset": {
        const o = await instance.reset();
        return { text: o.text, ...(o.messages ? { messages: o.messages } : {}), signals: o.signals };
      }
      case "step": {
        const r = await Promise.race([instance.step(exchange.call), seconds(stepTimeoutS(exchange.call.name))]);
        if (r === "timeout") return { unanswered: true };
        return { text: r.text, signals: r.signals, terminated: r.terminated };
      }
      case "final_answer":
        if (!instance.finalAnswer) return { error: { kind: "protocol", message: "the env takes no final answer" } };
        return { signals: await instance.finalAnswer(exchange.answer) };
      case "outcome":
        return { signals: await instance.outcome() };
    }
  } catch (error) {
    if (error instanceof EnvError) return { error: { kind: error.kind, message: error.message } };
    throw error;
  }
}

function describe(exchange: EnvExchange): string {
  switch (exchange.op) {
    case "reset":
      return "the reset";
    case "step":
      return `the tool call ${exchange.call.name} ${JSON.stringify(exchange.call.arguments)}`;
    case "final_answer":
      return `the final answer ${JSON.stringify(exchange.answer)}`;
    case "outcome":
      return "the outcome";
  }
}

const faultText = (f: EnvFault | undefined) => (f ? `env error (${f.kind}): ${f.message}` : "no env error");
const signalText = (v: Signals[string] | undefined) => (v === undefined ? "(not reported)" : JSON.stringify(v));

/** The first difference between a recorded answer and a replayed one; undefined: the same. */
function difference(recorded: Answer, replayed: Answer): Omit<Divergence, "where"> | undefined {
  if (recorded.unanswered || replayed.unanswered) {
    if (recorded.unanswered && replayed.unanswered) return undefined;
    const side = (a: Answer) =>
      a.unanswered
        ? "no answer within the tool's timeout_s"
        : a.error
          ? faultText(a.error)
          : `answered ${JSON.stringify(a.text)}`;
    return { what: "whether the env answered in time", recorded: side(recorded), replayed: side(replayed) };
  }
  if (recorded.error || replayed.error) {
    if (recorded.error?.kind === replayed.error?.kind && recorded.error?.message === replayed.error?.message)
      return undefined;
    return { what: "the env error", recorded: faultText(recorded.error), replayed: faultText(replayed.error) };
  }
  if (recorded.text !== replayed.text)
    return { what: "the observation", recorded: recorded.text ?? "(none)", replayed: replayed.text ?? "(none)" };
  const messages = (a: Answer) => JSON.stringify(a.messages ?? null);
  if (messages(recorded) !== messages(replayed))
    return { what: "the task's messages", recorded: messages(recorded), replayed: messages(replayed) };
  const a = recorded.signals ?? {};
  const b = replayed.signals ?? {};
  for (const name of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (!Object.is(a[name], b[name]))
      return { what: `signal '${name}'`, recorded: signalText(a[name]), replayed: signalText(b[name]) };
  }
  if ((recorded.terminated ?? false) !== (replayed.terminated ?? false))
    return {
      what: "whether the task ended (terminated)",
      recorded: String(recorded.terminated ?? false),
      replayed: String(replayed.terminated ?? false),
    };
  return undefined;
}

function sourceOf(env: string, snapshot: SignalSnapshot) {
  return episodeSignalSource(env, snapshot.env, snapshot.episode as unknown as EpisodeSignals);
}

/** The rewards computed again from the recorded snapshots (`states`, `final`) against those the run trained on; undefined: the same. */
export function rewardDifference(
  plan: Plan,
  record: TrajectoryRecord,
  states: readonly SignalSnapshot[] | undefined,
  final: SignalSnapshot | undefined,
): Omit<Divergence, "where"> | undefined {
  if (record.end === "env_error" || !states || !final) return undefined;
  const score = scoreSignals(
    plan,
    states.map((s) => sourceOf(record.env, s)),
    sourceOf(record.env, final),
    record.end,
  );
  if ("signalError" in score)
    return {
      what: "the rewards",
      recorded: `reward ${record.reward}`,
      replayed: `no reward: env '${record.env}' ${score.signalError}`,
    };
  for (const term of [...new Set([...Object.keys(record.rewards), ...Object.keys(score.rewards.terms)])].sort()) {
    const was = record.rewards[term];
    const now = score.rewards.terms[term];
    if (!Object.is(was, now))
      return { what: `reward term '${term}'`, recorded: String(was ?? "(none)"), replayed: String(now ?? "(none)") };
  }
  if (!Object.is(record.reward, score.rewards.total))
    return { what: "the reward", recorded: String(record.reward), replayed: String(score.rewards.total) };
  return undefined;
}

/** Replays `record`'s episode (its first record) in a fresh instance of its env. */
export async function replayEpisode(
  plan: Plan,
  kind: EnvKind | undefined,
  record: TrajectoryRecord,
): Promise<EpisodeReplay> {
  const env = plan.envs[record.env];
  if (env === undefined) return { status: "cannot", reason: `the plan has no env '${record.env}'` };
  const transcript = record.transcript;
  if (transcript === undefined)
    return {
      status: "cannot",
      reason:
        "the buffer does not record what this episode asked of its env (it was written by an arl older than replay); run the plan again to replay it",
    };
  if (kind === undefined) return { status: "cannot", reason: `this arl has no env kind '${env.kind}'` };
  const tools = toolsFor(plan, record.env);
  const stepTimeoutS = (name: string) => tools.find((t) => t.name === name)?.timeout_s ?? 30;
  let instance: EnvInstance;
  try {
    instance = await kind.create(env, record.task, transcript.seed);
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    const divergence = {
      where: "creating the env",
      what: "the env error",
      recorded: "no env error",
      replayed: faultText({ kind: error.kind, message: error.message }),
    };
    return { status: "diverged", exchanges: 0, of: "env", divergence };
  }
  try {
    let n = 0;
    for (const exchange of transcript.exchanges) {
      n++;
      const replayed = await ask(instance, exchange, stepTimeoutS);
      const diff = difference(exchange, replayed);
      if (diff)
        return {
          status: "diverged",
          exchanges: n,
          of: "env",
          divergence: { where: `exchange ${n} of ${transcript.exchanges.length}, ${describe(exchange)}`, ...diff },
        };
      if (exchange.error) break;
    }
  } finally {
    await instance.close().catch(() => undefined);
  }
  const rewards = rewardDifference(plan, record, transcript.states, transcript.final);
  if (rewards)
    return {
      status: "diverged",
      exchanges: transcript.exchanges.length,
      of: "env",
      divergence: { where: "the rewards, from the recorded signals", ...rewards },
    };
  return { status: "identical", exchanges: transcript.exchanges.length, of: "env" };
}
