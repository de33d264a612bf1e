// What an agent program's episode asked of the model and what it reported, recorded with the
// episode in the token buffer (buffer.ts, `program`) so that `arl replay` can run the program
// again on the same task and seed, answer each of its model calls with what the gateway served
// the first time, and compare its requests and its outcome (src/replay/agent.ts). The program's
// env is the program's own: arl never sees its answers, only what they lead the program to ask
// and report.
import type { Signals } from "../contracts/env.js";
import type { SignalSnapshot } from "./env-transcript.js";

/** What the gateway answered one model call with (the model half's result, as served). */
export interface ServedCall {
  /** A chat reply's text (null: the tool calls are all there is), or a completion's text. */
  readonly content: string | null;
  readonly toolCalls: readonly { readonly id: string; readonly name: string; readonly arguments: string }[];
  readonly finish: "stop" | "length" | "tool_calls";
  readonly stopString: string | null;
  /**
   * The prompt's ids: its first `promptShared` ids are the previous call's prompt and generated
   * ids (how a continued conversation grows), `promptRest` the rest; the whole prompt is not
   * stored for every call.
   */
  readonly promptShared: number;
  readonly promptRest: Int32Array;
  readonly ids: Int32Array;
  readonly logprobs: Float32Array;
  readonly tokens: readonly string[];
  readonly policyVersion: number;
}

/** One model call of the program, in the order the calls came in. */
export interface AgentCall {
  readonly op: "chat" | "complete";
  /** The sha256 of the request as the gateway validated it (canonical JSON): a replayed request must hash the same. */
  readonly request: string;
  /** The request's last message (a chat) or its prompt's length (a completion), shown where a replay differs. */
  readonly last: string;
  /** What was served; absent when the call was refused. */
  readonly served?: ServedCall;
  /** The gateway's refusal (an OpenAI error), e.g. the budget's: served again as it was. */
  readonly refused?: {
    readonly status: number;
    readonly message: string;
    readonly type: string;
    readonly param: string | null;
    readonly code: string | null;
  };
  /** A budget ended the episode at this call (served or refused): the program was stopped then, and later calls count for nothing. */
  readonly ends?: true;
}

/** An agent episode's program transcript: its seed, its model calls, and how it ended. */
export interface AgentTranscript {
  /** ARL_SEED, the episode's seed. */
  readonly seed: number;
  readonly calls: readonly AgentCall[];
  /** The signals the program reported (checked against the declared ones), or what was wrong with what it reported; absent when it did not run. */
  readonly outcome?: Signals | string;
  /** Why the episode was an env error (the program's fault, one line, without its log's path). */
  readonly fault?: string;
  /** The signal snapshot the rewards read (the outcome with the session's counters), and how many states read it. */
  readonly final: SignalSnapshot;
  readonly states: number;
}

/** The ids a served call's prompt held, given the previous call's prompt and generated ids. */
export function promptIdsOf(served: ServedCall, previous: Int32Array | undefined): Int32Array {
  const out = new Int32Array(served.promptShared + served.promptRest.length);
  if (served.promptShared > 0 && previous) out.set(previous.subarray(0, served.promptShared));
  out.set(served.promptRest, served.promptShared);
  return out;
}

/** How many leading ids of `prompt` equal `previous` (the last call's prompt then its generated ids). */
export function sharedPrefix(prompt: Int32Array, previous: Int32Array | undefined): number {
  if (!previous) return 0;
  const n = Math.min(prompt.length, previous.length);
  let i = 0;
  while (i < n && prompt[i] === previous[i]) i++;
  return i;
}
