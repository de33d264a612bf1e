// One episode of an agent env (docs/gateway.md#agent-programs): a gateway session with its own
// ModelSession, the program started once with the session's URL and key and its task, and the
// episode assembled from what the session served (exact ids, samples, calls) and the outcome the
// program reported. The program's faults (a crash, a time-out, no or a bad outcome, a call with
// a wrong key or after its end) end the episode as `env_error` with a one-line reason, its
// stderr tail kept in <run dir>/agent-logs/; a fault of ours (the trainer failed while serving a
// call) propagates. A budget (harness.max_turns, max_total_tokens) ends the episode as the
// harness would, truncated or aborted, and stops the program.
import os from "node:os";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { resolveAgentCommand } from "../../contracts/agent-command.js";
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
import { episodeSignalSource, type Episode } from "../../episode/harness.js";
import { checkOutcome, parseOutcomeLine, zeroOutcome } from "./agent-outcome.js";
import { runAgentProcess, type AgentProcessResult } from "./agent-process.js";
import { agentSandbox } from "./agent-sandbox.js";
import { limitHit, limitsOf, runsFolder, sandboxEnv, sandboxFor } from "../../contracts/sandbox.js";
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

/** Why the program's run makes the episode an env error, from its exit and stderr; undefined: it exited 0. */
function exitFault(
  command: readonly string[],
  env: AgentEnv,
  run: AgentProcessResult,
  sandboxed: boolean,
): string | undefined {
  const program = `'${command.join(" ")}'`;
  if (run.spawnError)
    return `could not start ${program}: ${run.spawnError} (the command runs from the spec's folder; is the program on PATH?)`;
  if (run.timedOut) return `${program} did not finish within timeout_s ${env.timeout_s} s and was stopped`;
  if (run.outputExceeded)
    return `${program} wrote more than sandbox.output_bytes ${env.sandbox.output_bytes} bytes to stdout and stderr and was stopped`;
  if (run.code === 0) return undefined;
  const limit = sandboxed ? limitHit(run.code, run.signal, run.stderrTail, limitsOf(env.sandbox)) : undefined;
  if (limit !== undefined) return `${program} ${limit} and was stopped`;
  const missing = /No module named '([^']+)'/.exec(run.stderrTail)?.[1];
  if (missing) {
    return `${program} failed: Python has no module '${missing}'; install it into the Python the command starts (pip install ${missing.split(".")[0] ?? missing}), or name the interpreter that has it in command (e.g. a venv's bin/python)`;
  }
  const lastLine = run.stderrTail.trimEnd().split("\n").pop()?.trim() ?? "";
  // bubblewrap, the sandboxed program's parent, exits 128 + N when the program is killed by signal N.
  const signalled =
    run.code === null
      ? (run.signal ?? "a signal")
      : sandboxed && run.code > 128
        ? signalNamed(run.code - 128)
        : undefined;
  const how = signalled !== undefined ? `was killed by ${signalled}` : `exited with code ${run.code}`;
  return `${program} ${how}${lastLine ? `: ${lastLine.length > 200 ? `${lastLine.slice(0, 200)}...` : lastLine}` : ""}`;
}

/** The name of signal `n` (SIGKILL for 9), or "signal n". */
function signalNamed(n: number): string {
  return Object.entries(os.constants.signals).find(([, v]) => v === n)?.[0] ?? `signal ${n}`;
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

/** Plays one episode of agent env `env`; rejects only for a fault of ours. */
export async function playAgentEpisode(
  ctx: AgentEpisodeContext,
  slot: AgentSlot,
  env: AgentEnv,
  episodeSeed: number,
): Promise<{ episode: Episode; calls: AgentCalls }> {
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
  const model = new WatchedModel(session, () => stop.abort());
  let task;
  try {
    task = at(agentTasks(env, ctx.dataRoot), slot.task.id);
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    return failed(error.message, "");
  }
  const command = resolveAgentCommand(env.command);
  const where = sandboxFor(env.sandbox);
  if ("refusal" in where) return failed(where.refusal, "");
  const cwd = ctx.dataRoot ?? process.cwd();
  const sandbox =
    "bwrap" in where
      ? agentSandbox(where.bwrap, env.sandbox, gateway.origin, [runsFolder(ctx.runDir.dir, cwd), ctx.runDir.dir])
      : undefined;
  const handle = gateway.open(model, sandbox?.socket !== undefined ? { socket: sandbox.socket } : {});
  let run: AgentProcessResult;
  const onHalt = () => stop.abort();
  ctx.halt?.addEventListener("abort", onHalt, { once: true });
  try {
    await handle.ready;
    // Unsandboxed: added to the inherited environment, PATH untouched, so the user's own
    // (activated) Python environment is the one `python3` finds (docs/gateway.md#agent-programs).
    // Sandboxed: the whole environment, with PATH kept.
    const variables = {
      OPENAI_BASE_URL: handle.baseUrl,
      OPENAI_API_KEY: handle.apiKey,
      ANTHROPIC_BASE_URL: handle.anthropicBaseUrl,
      ANTHROPIC_API_KEY: handle.apiKey,
      ARL_OUTCOME_URL: handle.outcomeUrl,
      ARL_TASK: JSON.stringify(task),
      ARL_TASK_ID: String(slot.task.id),
      ARL_SEED: String(episodeSeed),
    };
    run = await runAgentProcess({
      command: sandbox ? sandbox.command(command, cwd, variables) : command,
      cwd,
      env: sandbox ? sandboxEnv(variables) : variables,
      ownEnv: sandbox !== undefined,
      maxOutputBytes: env.sandbox.output_bytes,
      stdin: `${JSON.stringify({ task, task_id: slot.task.id, seed: episodeSeed })}\n`,
      timeoutS: env.timeout_s,
      maxStderrBytes: env.max_stderr_bytes,
      signal: stop.signal,
    });
  } finally {
    ctx.halt?.removeEventListener("abort", onHalt);
    await handle.close();
    sandbox?.dispose();
  }
  if (model.internal !== undefined) throw model.internal;
  const record = session.record();
  const reported = handle.postedOutcome !== undefined ? { body: handle.postedOutcome } : parseOutcomeLine(run.lastLine);
  const outcome = "body" in reported ? checkOutcome(reported.body, env.signals) : reported.error;

  // A budget ended it: the harness's end, with what the program reported before, if anything.
  if (session.budgetEnd !== undefined)
    return assembled(record, typeof outcome === "string" ? zeroOutcome(env.signals) : outcome, record.end);
  const fault = handle.faults[0];
  const reason =
    exitFault(command, env, run, sandbox !== undefined) ??
    (fault ? `the program's gateway session saw a fault: ${fault.message}` : undefined) ??
    (typeof outcome === "string" ? `the program ${outcome}` : undefined) ??
    (record.episode.turns === 0
      ? "the program made no model call (nothing to train on); it must call the model at OPENAI_BASE_URL"
      : undefined);
  if (reason !== undefined) return failed(reason, run.stderrTail, record);
  return assembled(record, outcome as Signals, record.end);

  function assembled(
    r: SessionRecord,
    signals: Signals,
    end: Episode["end"],
    error?: string,
  ): { episode: Episode; calls: AgentCalls } {
    const final = episodeSignalSource(slot.task.env, signals, r.episode);
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
      // An agent reports its signals once, at the end: every state reads the outcome.
      states: [...r.turnEnds.map(() => final), final],
      final,
      turnEnds: r.turnEnds,
      generators: r.generators,
      messages: r.messages,
      templateTools: r.templateTools,
    };
    return { episode, calls: { calls: r.episode.turns, rewrites: r.rewrites } };
  }

  function failed(
    reason: string,
    stderrTail: string,
    record = session.record(),
  ): { episode: Episode; calls: AgentCalls } {
    const log = writeAgentLog(ctx, slot, reason, stderrTail);
    const line = reason.replace(/\s+/g, " ").trim();
    return assembled(record, zeroOutcome(env.signals), "env_error", `${line} (log: ${log})`);
  }
}
