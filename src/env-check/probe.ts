// Probing one env of a plan through the generic EnvKind API, before a run spends compute on it:
// determinism per seed (the same task and seed, reset twice and given the same actions, answer
// the same), session isolation (two sessions stepped interleaved each answer what one alone
// does), the declared signals (signals.ts), faults (a call that raises, hangs or answers
// malformed) and the latency of resets and steps.
import type { EnvKind } from "../contracts/env.js";
import { deriveSeed } from "../contracts/random.js";
import { ToolCallValidator, type ToolCall } from "../contracts/tool-calls.js";
import type { PlanEnv, PlanTool } from "../plan/schema.js";
import { objectFor } from "./arguments.js";
import { playInterleaved, ProbeEpisode, type EpisodeSpec, type Latencies, type TraceEvent } from "./episode.js";
import { SignalTally } from "./signals.js";

export interface ProbeOptions {
  /** Tasks probed per env (spread over its task ids, task 0 first). */
  readonly tasks: number;
  /** Actions per probe episode (fewer where a walkthrough is shorter or the episode ends). */
  readonly steps: number;
}

export type FindingCheck = "determinism" | "isolation" | "signals" | "fault" | "not probed";

export interface Finding {
  readonly check: FindingCheck;
  readonly message: string;
}

export interface EnvReport {
  readonly name: string;
  readonly kind: string;
  /** What was probed and seen: the probe's shape, each declared signal, the latencies. */
  readonly lines: string[];
  readonly findings: Finding[];
}

/** Kinds whose episodes cannot be driven by reset and step alone, and why. */
const UNPROBEABLE: Readonly<Record<string, string>> = {
  agent:
    "an agent env's episode is a whole program that calls the policy through the run's gateway; env-check has no policy to serve it, so it cannot reset or step it (run one iteration with 'arl run', then 'arl replay RUN_DIR' runs the program again on its recorded model answers and compares its requests and outcome)",
};

/** A text for the final answer of envs that score one (a dataset's row): any fixed text will do, the same each time. */
const PROBE_ANSWER = "42";
/** Seconds a call of a kind that names no time limit (an in-process env) may take. */
const DEFAULT_LIMIT_S = 30;
/** Seconds past the env's own limit before a call counts as hung: the adapter's own time-out answers first. */
const GRACE_S = 6;

function limits(env: PlanEnv, tools: readonly PlanTool[]): { call: number; step: (tool: string) => number } {
  const own = "timeout_s" in env && typeof env.timeout_s === "number" ? env.timeout_s : undefined;
  const retries = "retries" in env && typeof env.retries === "number" ? env.retries : 0;
  const base = own ?? DEFAULT_LIMIT_S;
  // Idempotent calls are retried by the adapters (with at most 2 s between tries).
  const call = base * (1 + retries) + 2 * retries + GRACE_S;
  return { call, step: (tool) => Math.max(base, tools.find((t) => t.name === tool)?.timeout_s ?? 0) + GRACE_S };
}

/** The probe's task ids: `n` spread over the env's, task 0 first. */
function probeTasks(env: PlanEnv, n: number): number[] {
  const count = Math.max(1, Math.min(n, env.tasks));
  return [...new Set(Array.from({ length: count }, (_, i) => Math.floor((i * env.tasks) / count)))];
}

/** The actions of one task: the env's walkthrough where it has one, else a valid call of each tool in turn. */
async function probeActions(
  kind: EnvKind,
  env: PlanEnv,
  tools: readonly PlanTool[],
  task: number,
  steps: number,
  notes: Set<string>,
): Promise<{ actions: ToolCall[]; source: string }> {
  if (kind.walkthrough) {
    try {
      const walkthrough = await kind.walkthrough(env, task);
      if (walkthrough && walkthrough.length > 0)
        return { actions: walkthrough.slice(0, steps), source: "the env's walkthrough" };
    } catch (error) {
      notes.add(
        `the walkthrough of task ${task} failed (${(error as Error).message}); probing with calls built from the tools' schemas`,
      );
    }
  }
  const validator = new ToolCallValidator();
  let words: readonly string[] = [];
  try {
    words = kind.vocabulary(env);
  } catch {
    // Words only vary the probe's strings; without them each string is "probe".
  }
  const actions: ToolCall[] = [];
  const usable = tools.filter((tool) => {
    const check = validator.check(
      { name: tool.name, arguments: objectFor(tool.definition.function.parameters, 0, words) },
      tools,
    );
    if (!check.ok)
      notes.add(
        `no valid call of tool '${tool.name}' could be built from its schema (${check.error}); it is left out of the probe`,
      );
    return check.ok;
  });
  for (let i = 0; i < steps && usable.length > 0; i++) {
    const tool = usable[i % usable.length] as PlanTool;
    const variant = Math.floor(i / usable.length) + i;
    const call = { name: tool.name, arguments: objectFor(tool.definition.function.parameters, variant, words) };
    actions.push(
      validator.check(call, tools).ok
        ? call
        : { name: tool.name, arguments: objectFor(tool.definition.function.parameters, 0, words) },
    );
  }
  return { actions, source: "calls built from the tools' schemas" };
}

const excerpt = (text: string): string => JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);

/** The first difference between two traces, in words; undefined when they are the same. */
function traceDifference(
  a: readonly TraceEvent[],
  b: readonly TraceEvent[],
  labels: readonly [string, string],
): string | undefined {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (!x || !y) {
      const [went, ended] = x ? [labels[0], labels[1]] : [labels[1], labels[0]];
      return `${ended} ended after ${a[i - 1]?.at ?? "nothing"} where ${went} went on to ${(x ?? y)?.at ?? "?"}`;
    }
    if (x.at !== y.at) return `${labels[0]} reached ${x.at} where ${labels[1]} reached ${y.at}`;
    if (x.text !== y.text)
      return `at ${x.at} the observation differs: ${excerpt(x.text ?? "")} (${labels[0]}) vs ${excerpt(y.text ?? "")} (${labels[1]})`;
    if (x.messages !== y.messages) return `at ${x.at} the prompt messages differ`;
    const names = [...new Set([...Object.keys(x.signals), ...Object.keys(y.signals)])].sort();
    const differing = names.filter((n) => x.signals[n] !== y.signals[n]);
    if (differing.length > 0)
      return `at ${x.at} ${differing.map((n) => `signal '${n}' is ${JSON.stringify(x.signals[n]) ?? "absent"} (${labels[0]}) vs ${JSON.stringify(y.signals[n]) ?? "absent"} (${labels[1]})`).join(", ")}`;
    if (x.terminated !== y.terminated)
      return `at ${x.at} the episode ${x.terminated ? "ended" : "went on"} (${labels[0]}) but ${y.terminated ? "ended" : "went on"} (${labels[1]})`;
  }
  return undefined;
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

/** Milliseconds to 2 significant digits below 10 ms, whole ones above. */
const msText = (ms: number): string => `${ms >= 10 ? Math.round(ms) : Number(ms.toPrecision(2))} ms`;

function latencyText(what: string, ms: readonly number[]): string {
  if (ms.length === 0) return `${what}: none`;
  return `${what} median ${msText(quantile(ms, 0.5))}, p95 ${msText(quantile(ms, 0.95))} (${ms.length})`;
}

/** A probe episode's fault, said where it happened and how. */
function faultText(where: string, fault: NonNullable<ProbeEpisode["fault"]>): string {
  const how = fault.how === "hung" ? "hung" : fault.how === "malformed" ? "answered malformed" : "raised";
  return `${where}: ${fault.at} ${how}: ${fault.message}`;
}

/** Probes env `name` of a plan (already provisioned when its kind needs it). */
export async function probeEnv(
  kind: EnvKind,
  name: string,
  env: PlanEnv,
  tools: readonly PlanTool[],
  planSeed: number,
  options: ProbeOptions,
): Promise<EnvReport> {
  const report: EnvReport = { name, kind: env.kind, lines: [], findings: [] };
  const unprobeable = UNPROBEABLE[env.kind];
  if (unprobeable !== undefined) {
    report.findings.push({ check: "not probed", message: unprobeable });
    return report;
  }
  const limit = limits(env, tools);
  const latencies: Latencies = { reset: [], step: [] };
  const tally = new SignalTally(env.signals);
  const notes = new Set<string>();
  const sources = new Set<string>();
  const tasks = probeTasks(env, options.tasks);
  let steps = 0;
  let answered = false;
  for (const task of tasks) {
    const seed = deriveSeed(planSeed, "env-check", name, task);
    const { actions, source } = await probeActions(kind, env, tools, task, options.steps, notes);
    if (actions.length > 0) sources.add(source);
    steps = Math.max(steps, actions.length);
    const spec: EpisodeSpec = {
      kind,
      env,
      task,
      seed,
      actions,
      ...(tools.length === 0 ? { answer: PROBE_ANSWER } : {}),
      callLimitS: limit.call,
      stepLimitS: limit.step,
    };
    const where = `task ${task}, seed ${seed}`;
    const first = new ProbeEpisode(spec, latencies);
    const second = new ProbeEpisode(spec, latencies);
    await playInterleaved([first]);
    await playInterleaved([second]);
    const pair = [new ProbeEpisode(spec, latencies), new ProbeEpisode(spec, latencies)] as const;
    await playInterleaved(pair);
    for (const [label, e] of [
      ["first", first],
      ["second", second],
      ["interleaved 1", pair[0]],
      ["interleaved 2", pair[1]],
    ] as const) {
      answered ||= e.events.some((ev) => ev.at === "answer");
      for (const ev of e.events)
        tally.record(ev.signals, ev.at === "outcome" || ev.at === "answer" ? "outcome" : "state", {
          task,
          seed,
          at: ev.at,
        });
      if (e.fault)
        report.findings.push({
          check: "fault",
          message: faultText(`${where}, ${label} episode`, e.fault),
        });
    }
    if (first.fault || second.fault) continue;
    const replay = traceDifference(first.events, second.events, ["first", "second"]);
    if (replay !== undefined) {
      report.findings.push({
        check: "determinism",
        message: `${where}: two episodes of the same task and seed, given the same ${actions.length} actions, differ: ${replay}`,
      });
      notes.add(`isolation of task ${task} not compared: one session alone does not answer the same twice`);
      continue;
    }
    if (pair[0].fault || pair[1].fault) continue;
    for (const [i, e] of pair.entries()) {
      const leak = traceDifference(first.events, e.events, ["alone", `session ${i + 1} of 2 stepped interleaved`]);
      if (leak === undefined) continue;
      // Two episodes alone can agree by chance (a secret drawn from four values); a third one
      // alone tells a session that leaks from one that is not a function of its seed.
      const third = new ProbeEpisode(spec, latencies);
      await playInterleaved([third]);
      const again = third.fault ? undefined : traceDifference(first.events, third.events, ["first", "third"]);
      if (third.fault)
        report.findings.push({
          check: "fault",
          message: faultText(`${where}, third episode alone`, third.fault),
        });
      const confirmed = third.fault ? "" : " (a third episode alone answers as the first)";
      report.findings.push(
        again !== undefined
          ? {
              check: "determinism",
              message: `${where}: episodes of the same task and seed, given the same ${actions.length} actions, differ (the first two alone agreed; a third alone, after two interleaved sessions, did not): ${again}`,
            }
          : {
              check: "isolation",
              message: `${where}: two sessions of the same task stepped interleaved do not each answer what one session alone does${confirmed}: ${leak}`,
            },
      );
      break;
    }
  }
  for (const message of tally.findings()) report.findings.push({ check: "signals", message });
  const shape =
    steps > 0
      ? `${steps} action${steps === 1 ? "" : "s"} each from ${[...sources].join(" / ")}`
      : "no actions (the env offers no tool)";
  report.lines.push(`probed tasks ${tasks.join(", ")}: ${shape}; 4 episodes a task (2 alone, 2 interleaved)`);
  if (answered)
    report.lines.push(`final answer ${JSON.stringify(PROBE_ANSWER)} given after the actions (the env scores answers)`);
  report.lines.push(...tally.summaries());
  report.lines.push(`latency: ${latencyText("reset", latencies.reset)}; ${latencyText("step", latencies.step)}`);
  for (const note of notes) report.lines.push(`note: ${note}`);
  return report;
}
