// One episode of an agent env (docs/gateway.md#agent-programs): a gateway session with its own
// ModelSession, the program started once with the session's URL and key and its task, and the
// episode assembled from what the session served (exact ids, samples, calls) and the outcome the
// program reported. The program's faults (a crash, a time-out, no or a bad outcome, a call with
// a wrong key or after its end) end the episode as `env_error` with a one-line reason, its
// stderr tail kept in <run dir>/agent-logs/; a fault of ours (the trainer failed while serving a
// call) propagates. A budget (harness.max_turns, max_total_tokens) ends the episode as the
// harness would, truncated or aborted, and stops the program.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { at } from "../../contracts/checked.js";
import type { Signals } from "../../contracts/env.js";
import { EnvError } from "../../contracts/env.js";
import { agentTasks, type AgentEnv } from "../../envs/adapters/agent.js";
import {
  GatewayError,
  type ChatRequest,
  type CompletionRequest,
  type SessionModel,
} from "../../inference/gateway/contract.js";
import { ModelSession } from "../../inference/gateway/model-session.js";
import type { SessionRecord } from "../../inference/gateway/session-trajectory.js";
import type { AgentTranscript } from "../../episode/agent-transcript.js";
import { signalSnapshot } from "../../episode/env-transcript.js";
import { episodeSignalSource, type Episode } from "../../episode/harness.js";
import { zeroOutcome } from "./agent-outcome.js";
import { programFault, runAgentProgram } from "./agent-program.js";
import { RecordingModel } from "./agent-recorder.js";
import type { Split } from "../../plan/splits.js";
import type { RunContext } from "./context.js";

/** Where the episode is played (episodes.ts EpisodeSlot). */
interface AgentSlot {
  readonly task: { readonly env: string; readonly id: number };
  readonly group: number;
  readonly sample: number;
  readonly split: Split;
  readonly iteration: number;
  readonly temperature?: number;
}

/** What the gateway served an agent episode, for the run's metrics. */
export interface AgentCalls {
  readonly calls: number;
  readonly rewrites: number;
}

/**
 * The model half handed to the gateway, watching for failures that are not the client's: those
 * stop the program at once and are rethrown once the episode is over.
 */
class WatchedModel implements SessionModel {
  internal: Error | undefined;
  constructor(
    private readonly inner: ModelSession,
    private readonly onInternal: () => void,
  ) {}
  get modelName(): string {
    return this.inner.modelName;
  }
  chat(request: ChatRequest) {
    return this.inner.chat(request).catch((e: unknown) => this.noted(e));
  }
  complete(request: CompletionRequest) {
    return this.inner.complete(request).catch((e: unknown) => this.noted(e));
  }
  private noted(error: unknown): never {
    if (!(error instanceof GatewayError) && this.internal === undefined) {
      this.internal = error instanceof Error ? error : new Error(String(error));
      this.onInternal();
    }
    throw error;
  }
}

/** Writes a failed episode's reason and stderr tail; returns the file (relative to the run directory). */
function writeAgentLog(ctx: AgentEpisodeContext, slot: AgentSlot, reason: string, stderrTail: string): string {
  const dir = path.join(ctx.runDir.dir, "agent-logs");
  mkdirSync(dir, { recursive: true });
  const name = `${slot.split}-${slot.iteration}-${slot.task.env}-${slot.task.id}-${slot.group}-${slot.sample}.log`;
  writeFileSync(
    path.join(dir, name),
    `${reason}\n--- stderr (the last ${Buffer.byteLength(stderrTail)} bytes) ---\n${stderrTail}`,
  );
  return `agent-logs/${name}`;
}

/** What an agent episode reads of the run's context. */
export type AgentEpisodeContext = Pick<
  RunContext,
  | "plan"
  | "runDir"
  | "gateway"
  | "policy"
  | "rolloutPolicy"
  | "template"
  | "stopIds"
  | "streams"
  | "dataRoot"
  | "halt"
  | "validator"
  | "modelContext"
>;

/** Plays one episode of agent env `env`, with its program transcript (for `arl replay`); rejects only for a fault of ours. */
export async function playAgentEpisode(
  ctx: AgentEpisodeContext,
  slot: AgentSlot,
  env: AgentEnv,
  episodeSeed: number,
): Promise<{ episode: Episode; calls: AgentCalls; program: AgentTranscript }> {
  const gateway = ctx.gateway;
  if (!gateway)
    throw new Error("an agent episode without the run's gateway (provision starts it for plans with agent envs)");
  const stop = new AbortController();
  const session = new ModelSession({
    policy: slot.temperature === undefined ? ctx.rolloutPolicy : ctx.policy,
    template: ctx.template,
    stopIds: ctx.stopIds,
    plan: ctx.plan,
    seed: (call) => ctx.streams.turnSeed(episodeSeed, call),
    ...(slot.temperature !== undefined ? { temperature: slot.temperature } : {}),
    // A budget ends the episode: the program is stopped (what it served so far is the episode).
    onBudget: () => stop.abort(),
    validator: ctx.validator,
    model: ctx.modelContext,
  });
  const watched = new WatchedModel(session, () => stop.abort());
  const model = new RecordingModel(watched, () => session.budgetEnd !== undefined);
  let task;
  try {
    task = at(agentTasks(env, ctx.dataRoot), slot.task.id);
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    return failed(error.message, "");
  }
  const end = await runAgentProgram({
    gateway,
    model,
    env,
    task,
    taskId: slot.task.id,
    seed: episodeSeed,
    cwd: ctx.dataRoot ?? process.cwd(),
    runDir: ctx.runDir.dir,
    stop,
    ...(ctx.halt ? { halt: ctx.halt } : {}),
  });
  if (watched.internal !== undefined) throw watched.internal;
  if ("refusal" in end) return failed(end.refusal, "");
  const record = session.record();
  const { outcome } = end;
  // A budget ended it: the harness's end, with what the program reported before, if anything.
  if (session.budgetEnd !== undefined)
    return assembled(record, typeof outcome === "string" ? zeroOutcome(env.signals) : outcome, record.end, outcome);
  const reason = programFault(end, record.episode.turns);
  if (reason !== undefined) return failed(reason, end.stderrTail, record, outcome);
  return assembled(record, outcome as Signals, record.end, outcome);

  function assembled(
    r: SessionRecord,
    signals: Signals,
    end: Episode["end"],
    reported: Signals | string | undefined,
    fault?: string,
    error?: string,
  ): { episode: Episode; calls: AgentCalls; program: AgentTranscript } {
    const final = episodeSignalSource(slot.task.env, signals, r.episode);
    // An agent reports its signals once, at the end: every state reads the outcome.
    const states = [...r.turnEnds.map(() => final), final];
    const episode: Episode = {
      ids: r.ids,
      roles: r.roles,
      versions: r.versions,
      logprobs: r.logprobs,
      samples: r.samples,
      end,
      ...(error !== undefined ? { error } : {}),
      toolCalls: r.toolCalls,
      episode: r.episode,
      states,
      final,
      turnEnds: r.turnEnds,
      generators: r.generators,
      messages: r.messages,
      templateTools: r.templateTools,
    };
    const program: AgentTranscript = {
      seed: episodeSeed,
      calls: model.calls(),
      ...(reported !== undefined ? { outcome: reported } : {}),
      ...(fault !== undefined ? { fault } : {}),
      final: signalSnapshot(final),
      states: states.length,
    };
    return { episode, calls: { calls: r.episode.turns, rewrites: r.rewrites }, program };
  }

  function failed(
    reason: string,
    stderrTail: string,
    record = session.record(),
    reported?: Signals | string,
  ): { episode: Episode; calls: AgentCalls; program: AgentTranscript } {
    const log = writeAgentLog(ctx, slot, reason, stderrTail);
    const line = reason.replace(/\s+/g, " ").trim();
    return assembled(record, zeroOutcome(env.signals), "env_error", reported, line, `${line} (log: ${log})`);
  }
}
