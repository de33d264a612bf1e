// Replaying one recorded episode of an agent env (`arl replay`, kind: agent): its program runs
// again, as a run runs it (the same task, seed, folder and sandbox), against a gateway session
// whose model half answers each call with what the run's gateway served it, found by the
// request's digest. The program's env is its own, so what is compared is what the env's answers
// lead the program to do: every request it makes must be one the recorded episode made (the
// same conversation, tools and options), it must make every call the recorded one made (up to
// the one where a budget stopped it), and it must end as it did: the same fault, or the same
// outcome signals. The rewards are then computed again from the recorded signal snapshot.
import { at } from "../contracts/checked.js";
import { EnvError, type Signals } from "../contracts/env.js";
import { agentTasks, type AgentEnv, type AgentTask } from "../envs/adapters/agent.js";
import { promptIdsOf, type AgentCall, type AgentTranscript } from "../episode/agent-transcript.js";
import type { TrajectoryRecord } from "../episode/buffer.js";
import {
  GatewayError,
  type ChatRequest,
  type ChatResult,
  type CompletionRequest,
  type CompletionResult,
  type Gateway,
  type SessionModel,
} from "../inference/gateway/contract.js";
import type { Plan } from "../plan/schema.js";
import { programFault, runAgentProgram } from "../runtime/run/agent-program.js";
import { requestDigest, requestEnd } from "../runtime/run/agent-recorder.js";
import { rewardDifference, type Divergence, type EpisodeReplay } from "./episode.js";

/** Where an agent program runs again: the replay's gateway, the run's data root and run directory. */
export interface AgentReplaySetup {
  /** Absent when no selected episode recorded its program's calls. */
  readonly gateway: Gateway | undefined;
  readonly dataRoot: string | undefined;
  readonly runDir: string;
}

/** The model half of a replayed session: each request answered with what the recorded episode was served for the same request. */
class RecordedModel implements SessionModel {
  private readonly used: boolean[];
  private readonly prompts: (Int32Array | undefined)[] = [];
  private arrivals = 0;
  /** Calls answered with a served result: the program's model calls, as the session counted them. */
  served = 0;
  /** Whether the call where a budget ended the recorded episode was replayed (the program then stopped). */
  budgetEnded = false;
  divergence: Omit<Divergence, "where"> | undefined;

  constructor(
    readonly modelName: string,
    private readonly calls: readonly AgentCall[],
    private readonly stop: AbortController,
  ) {
    this.used = calls.map(() => false);
    let previous: Int32Array | undefined;
    for (const c of calls) {
      if (!c.served) {
        this.prompts.push(undefined);
        continue;
      }
      const prompt = promptIdsOf(c.served, previous);
      this.prompts.push(prompt);
      previous = new Int32Array(prompt.length + c.served.ids.length);
      previous.set(prompt);
      previous.set(c.served.ids, prompt.length);
    }
  }

  chat(request: ChatRequest): Promise<ChatResult> {
    return this.answer("chat", request, (c, prompt) => ({
      content: c.content,
      toolCalls: c.toolCalls,
      finish: c.finish,
      stopString: c.stopString,
      promptIds: prompt,
      ids: c.ids,
      logprobs: c.logprobs,
      tokens: c.tokens,
      policyVersion: c.policyVersion,
    }));
  }

  complete(request: CompletionRequest): Promise<CompletionResult> {
    return this.answer("complete", request, (c, prompt) => ({
      text: c.content ?? "",
      finish: c.finish === "tool_calls" ? "stop" : c.finish,
      promptIds: prompt,
      ids: c.ids,
      logprobs: c.logprobs,
      tokens: c.tokens,
      policyVersion: c.policyVersion,
    }));
  }

  /** The recorded calls the program did not make, up to the one where a budget stopped it (those after it count for nothing). */
  missing(): number[] {
    const end = this.calls.findIndex((c) => c.ends === true);
    const owed = end < 0 ? this.calls.length : end + 1;
    return this.used.slice(0, owed).flatMap((u, i) => (u ? [] : [i]));
  }

  private answer<T>(
    op: AgentCall["op"],
    request: ChatRequest | CompletionRequest,
    result: (served: NonNullable<AgentCall["served"]>, prompt: Int32Array) => T,
  ): Promise<T> {
    const n = ++this.arrivals;
    const digest = requestDigest(op, request);
    const k = this.calls.findIndex((c, i) => !this.used[i] && c.op === op && c.request === digest);
    if (k < 0) {
      const next = this.used.indexOf(false);
      this.divergence ??= {
        what: `the program's model call ${n}`,
        recorded:
          next < 0
            ? `no call ${n}: the recorded program made ${this.calls.length}`
            : `call ${next + 1}: ${at(this.calls, next).last}`,
        replayed: requestEnd(op, request),
      };
      this.stop.abort();
      return Promise.reject(
        new GatewayError(409, "arl replay: the recorded episode made no such request", "conflict_error"),
      );
    }
    this.used[k] = true;
    const call = at(this.calls, k);
    if (call.ends) {
      this.budgetEnded = true;
      this.stop.abort();
    }
    if (call.refused) {
      const r = call.refused;
      return Promise.reject(new GatewayError(r.status, r.message, r.type as GatewayError["type"], r.param, r.code));
    }
    const prompt = this.prompts[k];
    if (!call.served || !prompt) {
      // The recorded program was stopped while this call was being served.
      this.stop.abort();
      return Promise.reject(new GatewayError(410, "arl replay: the recorded episode ended during this call"));
    }
    this.served++;
    return Promise.resolve(result(call.served, prompt));
  }
}

/** A fault as the episode records it: one line. */
const line = (fault: string | undefined) => fault?.replace(/\s+/g, " ").trim();

const text = (v: Signals | string | undefined) =>
  v === undefined ? "(the program did not run)" : typeof v === "string" ? `a bad outcome: ${v}` : JSON.stringify(v);

/** The first difference between the recorded end of the program and the replayed one. */
function endDifference(
  recorded: AgentTranscript,
  fault: string | undefined,
  outcome: Signals | string | undefined,
): Omit<Divergence, "where"> | undefined {
  if (recorded.fault !== fault)
    return {
      what: "the program's fault (the episode's env error)",
      recorded: recorded.fault ?? "no fault",
      replayed: fault ?? "no fault",
    };
  const a = recorded.outcome;
  if (typeof a !== "object" || typeof outcome !== "object") {
    return a === outcome ? undefined : { what: "the outcome it reported", recorded: text(a), replayed: text(outcome) };
  }
  for (const name of [...new Set([...Object.keys(a), ...Object.keys(outcome)])].sort()) {
    if (!Object.is(a[name], outcome[name]))
      return {
        what: `the outcome signal '${name}'`,
        recorded: a[name] === undefined ? "(not reported)" : JSON.stringify(a[name]),
        replayed: outcome[name] === undefined ? "(not reported)" : JSON.stringify(outcome[name]),
      };
  }
  return undefined;
}

/** Replays `record`'s agent episode (its first record) by running its program again on the recorded model answers. */
export async function replayAgentEpisode(
  plan: Plan,
  env: AgentEnv,
  record: TrajectoryRecord,
  setup: AgentReplaySetup,
): Promise<EpisodeReplay> {
  const program = record.program;
  const gateway = setup.gateway;
  if (program === undefined || gateway === undefined)
    return {
      status: "cannot",
      reason:
        "the buffer does not record this agent episode's model calls (it was written by an arl older than agent replay); run the plan again to replay it",
    };
  const calls = program.calls.length;
  const diverged = (where: string, d: Omit<Divergence, "where">): EpisodeReplay => ({
    status: "diverged",
    exchanges: calls,
    of: "program",
    divergence: { where, ...d },
  });
  let task: AgentTask;
  try {
    task = at(agentTasks(env, setup.dataRoot), record.task);
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    const d = endDifference(program, line(error.message), undefined);
    return d ? diverged("reading the task", d) : { status: "identical", exchanges: 0, of: "program" };
  }
  const stop = new AbortController();
  const model = new RecordedModel(plan.policy.model, program.calls, stop);
  const end = await runAgentProgram({
    gateway,
    model,
    env,
    task,
    taskId: record.task,
    seed: program.seed,
    cwd: setup.dataRoot ?? process.cwd(),
    runDir: setup.runDir,
    stop,
  });
  if (model.divergence) return diverged("the program's requests", model.divergence);
  const missing = model.missing();
  if (missing.length > 0) {
    const first = at(program.calls, at(missing, 0));
    return diverged("the program's requests", {
      what: "the model calls it made",
      recorded: `${calls} calls; call ${at(missing, 0) + 1}: ${first.last}`,
      replayed: `${calls - missing.length} of them; it never made call ${at(missing, 0) + 1}`,
    });
  }
  const fault = line("refusal" in end ? end.refusal : model.budgetEnded ? undefined : programFault(end, model.served));
  const outcome = "refusal" in end ? undefined : end.outcome;
  const ended = endDifference(program, fault, outcome);
  if (ended) return diverged("the program's end", ended);
  const rewards = rewardDifference(
    plan,
    record,
    Array<typeof program.final>(program.states).fill(program.final),
    program.final,
  );
  if (rewards) return diverged("the rewards, from the recorded signals", rewards);
  return { status: "identical", exchanges: model.served, of: "program" };
}
