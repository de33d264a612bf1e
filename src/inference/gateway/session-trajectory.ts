// What an agent gateway session keeps for training (docs/gateway.md#exact-tokens-and-rewrites):
// its samples, each a context the model was given and the calls that continued it, with every
// token's role, version and log-prob; the calls the model made and the results the harness sent
// back; and, at the end, the episode's pieces (record()).
import type { ToolCallRecord, EndReason } from "../../episode/buffer.js";
import { TokenContext, type Conversation, type TokenSequence } from "../../episode/conversation.js";
import type { EpisodeSignals, Sample } from "../../episode/harness.js";
import type { Message } from "../../episode/policy.js";

/** Why a call started a new sample instead of continuing the served stream. */
export type SampleStart = "first" | "rewrite" | "cut" | "rerender";

/** One sample being built: its token stream and, for chat calls, its conversation as the template renders it. */
export class SessionSample {
  readonly ctx = new TokenContext();
  /** Index in ctx of the last generated token of each call of this sample. */
  readonly turnEnds: number[] = [];
  /** The prompt of the last call: the next one must begin with it (TokenContext.prompt). */
  lastPrompt: Int32Array | undefined;
  /** The last call ended with the end-of-turn token it sampled, so the template can continue after it. */
  closed = false;

  constructor(
    /** The session's call index of the sample's first call. */
    readonly step: number,
    readonly start: SampleStart,
    /** The rendered conversation (chat calls); null for a completion's token prompt. */
    readonly conversation: Conversation | null,
    /** The offered tools this sample's context was rendered with (JSON), to tell a changed offer. */
    readonly toolsKey: string,
  ) {}
}

/** A call the model made, with the result the harness later sent for it. */
export interface SessionToolCall {
  readonly id: string;
  readonly turn: number;
  readonly name: string;
  readonly arguments: unknown;
  readonly valid: boolean;
  result: string;
  readonly error?: string;
}

/** What a request asked for that the plan decides instead (recorded, not applied). */
export interface RequestedSampling {
  readonly call: number;
  readonly temperature: number | null;
  readonly topP: number | null;
  readonly seed: number | null;
  readonly maxTokens: number | null;
}

/** The episode pieces a session produced (the agent episode adds the outcome, states and end). */
export interface SessionRecord extends TokenSequence {
  /** What the update trains on: one sample per context (the first call and every call that could not continue). */
  readonly samples: readonly Sample[];
  /** The samples one after another; turnEnds index into this stream (one per call). */
  readonly turnEnds: readonly number[];
  /** True when the episode trains step-wise (more than one sample, or history: rerender). */
  readonly stepwise: boolean;
  /** Why each sample began (first call, a rewritten history, a cut turn, history: rerender), in order. */
  readonly starts: readonly SampleStart[];
  /** Calls whose request rewrote the history the session had served. */
  readonly rewrites: number;
  /** Calls after a turn that was cut before its end-of-turn token (a stop string or a length finish), which start a new sample. */
  readonly cuts: number;
  readonly generators: readonly string[];
  /** The last chat conversation as the template rendered it, the served reply included. */
  readonly messages: readonly Message[];
  readonly templateTools: readonly unknown[] | null;
  readonly toolCalls: readonly ToolCallRecord[];
  readonly episode: EpisodeSignals;
  /** finished, or the budget end (truncated / aborted per harness.on_budget). */
  readonly end: Extract<EndReason, "finished" | "truncated" | "aborted">;
  readonly requested: readonly RequestedSampling[];
}

/** The session's samples as the update takes them, and the whole stream they make one after another. */
export function assembleSamples(
  samples: readonly SessionSample[],
  stepwise: boolean,
): { samples: Sample[]; starts: SampleStart[]; stream: TokenSequence; turnEnds: number[] } {
  const kept = samples.filter((s) => s.turnEnds.length > 0);
  const out: Sample[] = kept.map((s) => ({
    ...s.ctx.sequence(),
    turnEnds: [...s.turnEnds],
    ...(stepwise ? { step: s.step } : {}),
  }));
  const turnEnds: number[] = [];
  let offset = 0;
  for (const s of out) {
    turnEnds.push(...s.turnEnds.map((k) => k + offset));
    offset += s.ids.length;
  }
  const cat = <T extends Uint8Array | Int32Array | Float32Array>(
    make: new (n: number) => T,
    part: (s: Sample) => T,
  ): T => {
    const result = new make(offset);
    let from = 0;
    for (const s of out) {
      result.set(part(s), from);
      from += s.ids.length;
    }
    return result;
  };
  const stream = {
    ids: cat(Int32Array, (s) => s.ids),
    roles: cat(Uint8Array, (s) => s.roles),
    versions: cat(Int32Array, (s) => s.versions),
    logprobs: cat(Float32Array, (s) => s.logprobs),
  };
  return { samples: out, starts: kept.map((s) => s.start), stream, turnEnds };
}

/** The calls as the buffer records them. */
export function toolCallRecords(calls: readonly SessionToolCall[]): ToolCallRecord[] {
  return calls.map((c) => ({
    turn: c.turn,
    name: c.name,
    arguments: c.arguments,
    valid: c.valid,
    blocked: false,
    result: c.result,
    ...(c.error ? { error: c.error } : {}),
  }));
}
