// An agent episode's model calls written down as the gateway serves them (episode/agent-transcript.ts),
// for `arl replay`: each request's digest and last message, and what was served or refused.
import { createHash } from "node:crypto";
import { sharedPrefix, type AgentCall, type ServedCall } from "../../episode/agent-transcript.js";
import {
  GatewayError,
  type ChatRequest,
  type ChatResult,
  type CompletionRequest,
  type CompletionResult,
  type SessionModel,
} from "../../inference/gateway/contract.js";
import { canonicalize } from "../../plan/canonical.js";

/** JSON with typed arrays as plain arrays and undefined fields dropped. */
function plain(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_k, v: unknown) => (ArrayBuffer.isView(v) ? Array.from(v as Int32Array) : v)),
  );
}

/** The sha256 of a validated request, as its canonical JSON: what a replayed program's request is compared by. */
export function requestDigest(op: AgentCall["op"], request: ChatRequest | CompletionRequest): string {
  return createHash("sha256")
    .update(canonicalize({ op, request: plain(request) }))
    .digest("hex");
}

/** A request's last message (a chat) or its prompt's length (a completion): what a divergence shows of it. */
export function requestEnd(op: AgentCall["op"], request: ChatRequest | CompletionRequest): string {
  if (op === "complete") return `a completion of a ${(request as CompletionRequest).prompt.length}-token prompt`;
  const last = (request as ChatRequest).messages.at(-1);
  if (!last) return "(no messages)";
  return `${(request as ChatRequest).messages.length} messages, the last (${last.role}): ${JSON.stringify(last.content)}`;
}

interface Pending {
  readonly op: AgentCall["op"];
  readonly request: string;
  readonly last: string;
  served?: { readonly result: ChatResult | CompletionResult };
  refused?: AgentCall["refused"];
  ends?: true;
}

/** Wraps the model half of an episode's session and records every call; `budgetEnded` says whether a budget has ended the episode. */
export class RecordingModel implements SessionModel {
  private readonly pending: Pending[] = [];
  private budgetSeen = false;

  constructor(
    private readonly inner: SessionModel,
    private readonly budgetEnded: () => boolean,
  ) {}

  get modelName(): string {
    return this.inner.modelName;
  }

  chat(request: ChatRequest): Promise<ChatResult> {
    const entry = this.begin("chat", request);
    return this.noted(entry, this.inner.chat(request));
  }

  complete(request: CompletionRequest): Promise<CompletionResult> {
    const entry = this.begin("complete", request);
    return this.noted(entry, this.inner.complete(request));
  }

  /** The calls in the order they came in, each prompt stored as what it adds to the previous call's ids. */
  calls(): AgentCall[] {
    let previous: Int32Array | undefined;
    return this.pending.map((p) => {
      const call: AgentCall = {
        op: p.op,
        request: p.request,
        last: p.last,
        ...(p.refused ? { refused: p.refused } : {}),
        ...(p.ends ? { ends: true as const } : {}),
      };
      if (!p.served) return call;
      const r = p.served.result;
      const shared = sharedPrefix(r.promptIds, previous);
      const served: ServedCall = {
        content: "content" in r ? r.content : r.text,
        toolCalls: "toolCalls" in r ? r.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })) : [],
        finish: r.finish,
        stopString: "stopString" in r ? r.stopString : null,
        promptShared: shared,
        promptRest: r.promptIds.slice(shared),
        ids: r.ids,
        logprobs: r.logprobs,
        tokens: r.tokens,
        policyVersion: r.policyVersion,
      };
      previous = new Int32Array(r.promptIds.length + r.ids.length);
      previous.set(r.promptIds);
      previous.set(r.ids, r.promptIds.length);
      return { ...call, served };
    });
  }

  private begin(op: AgentCall["op"], request: ChatRequest | CompletionRequest): Pending {
    const entry: Pending = { op, request: requestDigest(op, request), last: requestEnd(op, request) };
    this.pending.push(entry);
    return entry;
  }

  /** Whether the budget ended the episode at this call (the first call after which it has ended). */
  private endedHere(entry: Pending): void {
    if (this.budgetSeen || !this.budgetEnded()) return;
    this.budgetSeen = true;
    entry.ends = true;
  }

  private async noted<T extends ChatResult | CompletionResult>(entry: Pending, answer: Promise<T>): Promise<T> {
    try {
      const result = await answer;
      entry.served = { result };
      this.endedHere(entry);
      return result;
    } catch (error) {
      if (error instanceof GatewayError) {
        entry.refused = {
          status: error.status,
          message: error.message,
          type: error.type,
          param: error.param,
          code: error.code,
        };
        this.endedHere(entry);
      }
      throw error;
    }
  }
}
