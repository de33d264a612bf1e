// Running an agent env's program for one episode (docs/gateway.md#agent-programs): a session of
// the gateway around a model half (the run's, or `arl replay`'s answers from the record), the
// program started once with the session's URL, key, task and seed (in its sandbox where there is
// one), and what it left: the outcome it reported, checked, and the fault that makes the episode
// an env error (a crash, a time-out, a wrong key, a call after its end, a bad or no outcome).
import os from "node:os";
import { resolveAgentCommand } from "../../contracts/agent-command.js";
import type { Signals } from "../../contracts/env.js";
import { limitHit, limitsOf, runsFolder, sandboxEnv, sandboxFor } from "../../contracts/sandbox.js";
import type { AgentEnv, AgentTask } from "../../envs/adapters/agent.js";
import type { Gateway, SessionModel } from "../../inference/gateway/contract.js";
import { checkOutcome, parseOutcomeLine } from "./agent-outcome.js";
import { runAgentProcess, type AgentProcessResult } from "./agent-process.js";
import { agentSandbox } from "./agent-sandbox.js";

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

/** One run of an agent program. */
export interface ProgramRun {
  readonly gateway: Gateway;
  /** The model half its session is served by. */
  readonly model: SessionModel;
  readonly env: AgentEnv;
  readonly task: AgentTask;
  readonly taskId: number;
  /** ARL_SEED. */
  readonly seed: number;
  /** Where it runs: the run's data root (the spec's folder). */
  readonly cwd: string;
  /** The run directory, whose runs folder the sandbox hides. */
  readonly runDir: string;
  /** Aborted to stop the program (a budget, a fault of ours, the run's halt). */
  readonly stop: AbortController;
  readonly halt?: AbortSignal;
}

/** What the program left. */
export interface ProgramEnd {
  /** The signals it reported, checked against the declared ones; a string: what is wrong with its outcome. */
  readonly outcome: Signals | string;
  /** How its run failed (its exit, a time-out, its session's first fault); undefined when it did not. */
  readonly fault: string | undefined;
  readonly stderrTail: string;
}

/** Runs the program once; `{ refusal }` when it cannot run here at all (the sandbox it requires is unavailable). */
export async function runAgentProgram(p: ProgramRun): Promise<ProgramEnd | { readonly refusal: string }> {
  const command = resolveAgentCommand(p.env.command);
  const where = sandboxFor(p.env.sandbox);
  if ("refusal" in where) return { refusal: where.refusal };
  const sandbox =
    "bwrap" in where
      ? agentSandbox(where.bwrap, p.env.sandbox, p.gateway.origin, [runsFolder(p.runDir, p.cwd), p.runDir])
      : undefined;
  const handle = p.gateway.open(p.model, sandbox?.socket !== undefined ? { socket: sandbox.socket } : {});
  let run: AgentProcessResult;
  const onHalt = () => p.stop.abort();
  p.halt?.addEventListener("abort", onHalt, { once: true });
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
      ARL_TASK: JSON.stringify(p.task),
      ARL_TASK_ID: String(p.taskId),
      ARL_SEED: String(p.seed),
    };
    run = await runAgentProcess({
      command: sandbox ? sandbox.command(command, p.cwd, variables) : command,
      cwd: p.cwd,
      env: sandbox ? sandboxEnv(variables) : variables,
      ownEnv: sandbox !== undefined,
      maxOutputBytes: p.env.sandbox.output_bytes,
      stdin: `${JSON.stringify({ task: p.task, task_id: p.taskId, seed: p.seed })}\n`,
      timeoutS: p.env.timeout_s,
      maxStderrBytes: p.env.max_stderr_bytes,
      signal: p.stop.signal,
    });
  } finally {
    p.halt?.removeEventListener("abort", onHalt);
    await handle.close();
    sandbox?.dispose();
  }
  const reported = handle.postedOutcome !== undefined ? { body: handle.postedOutcome } : parseOutcomeLine(run.lastLine);
  const outcome = "body" in reported ? checkOutcome(reported.body, p.env.signals) : reported.error;
  const sessionFault = handle.faults[0];
  const fault =
    exitFault(command, p.env, run, sandbox !== undefined) ??
    (sessionFault ? `the program's gateway session saw a fault: ${sessionFault.message}` : undefined);
  return { outcome, fault, stderrTail: run.stderrTail };
}

/** Why a program that was not stopped by a budget makes its episode an env error; undefined: it does not. */
export function programFault(end: ProgramEnd, calls: number): string | undefined {
  return (
    end.fault ??
    (typeof end.outcome === "string" ? `the program ${end.outcome}` : undefined) ??
    (calls === 0
      ? "the program made no model call (nothing to train on); it must call the model at OPENAI_BASE_URL"
      : undefined)
  );
}
