// One episode's conversation, kept twice: as chat messages (what the chat template renders) and
// as the token stream appended turn by turn (what `history: exact` trains). The trainer encodes
// each new message as the template continues the conversation (encode's `context`), so the
// stream holds the generated ids as sampled and the template's own text between turns.
import { at } from "../contracts/checked.js";
import type { ChatTemplateInfo } from "../contracts/trainer-protocol.js";
import { Role } from "./buffer.js";
import type { Message, Policy } from "./policy.js";

/** What configure reports when the trainer says nothing about its template (the embedded model). */
export const DEFAULT_TEMPLATE: ChatTemplateInfo = {
  prefix_preserving: true,
  renders_tools: false,
  tool_call_format: "hermes",
  tool_role: "tool",
};

class PrefixContinuityError extends Error {}

/** A token sequence with each token's role, the policy version that sampled it and its log-prob. */
export interface TokenSequence {
  readonly ids: Int32Array;
  readonly roles: Uint8Array;
  /** Policy version that generated each token; -1 where the policy did not. */
  readonly versions: Int32Array;
  /** Log-probability under the sampling distribution actually used; 0 where not generated. */
  readonly logprobs: Float32Array;
}

/** The token stream of an episode, appended turn by turn. */
export class TokenContext {
  private ids: number[] = [];
  private roles: number[] = [];
  private versions: number[] = [];
  private logprobs: number[] = [];

  append(ids: ArrayLike<number>, role: number, version = -1, logprobs?: ArrayLike<number>): void {
    for (let i = 0; i < ids.length; i++) {
      this.ids.push(at(ids, i));
      this.roles.push(role);
      this.versions.push(version);
      this.logprobs.push(logprobs ? at(logprobs, i) : 0);
    }
  }

  /** The ids to send; they must begin with exactly the ids sent last time. */
  prompt(previous: Int32Array | undefined): Int32Array {
    const next = Int32Array.from(this.ids);
    if (previous) {
      if (next.length < previous.length) throw new PrefixContinuityError("the context shrank between turns");
      for (let i = 0; i < previous.length; i++) {
        if (next[i] !== previous[i])
          throw new PrefixContinuityError(`token ${i} changed between turns (${previous[i]} -> ${next[i]})`);
      }
    }
    return next;
  }

  get length(): number {
    return this.ids.length;
  }

  sequence(): TokenSequence {
    return {
      ids: Int32Array.from(this.ids),
      roles: Uint8Array.from(this.roles),
      versions: Int32Array.from(this.versions),
      logprobs: Float32Array.from(this.logprobs),
    };
  }
}

/** A generated turn's ids without its trailing end-of-turn token(s): what its text is decoded from. */
export function withoutStop(ids: Int32Array, stopIds: readonly number[]): Int32Array {
  let end = ids.length;
  while (end > 0 && stopIds.includes(at(ids, end - 1))) end--;
  return ids.subarray(0, end);
}

/** The role of a message's tokens in a context: what produced them and whether they can be targets. */
export function messageRole(message: Message): number {
  switch (message.role) {
    case "system":
      return Role.system;
    case "user":
      return Role.prompt;
    case "tool":
      return Role.observation;
    case "assistant":
      // An earlier turn rendered again from its text: context only, never a target.
      return Role.rendered;
  }
}

/** The conversation as chat messages, encoded through the policy's chat template. */
export class Conversation {
  readonly messages: Message[] = [];

  constructor(
    private readonly policy: Policy,
    /** OpenAI function definitions for a template that renders tools itself; undefined: none. */
    readonly tools: readonly unknown[] | undefined,
  ) {}

  add(message: Message): number {
    this.messages.push(message);
    return this.messages.length - 1;
  }

  /** Replaces message `index` (a truncated observation keeps the text of what was kept). */
  replace(index: number, message: Message): void {
    this.messages[index] = message;
  }

  /**
   * The ids of messages[context:], as the template continues the first `context` messages, with
   * the generation prompt after the last. A trainer that predates `context` (an optional field
   * it ignores) returns every message; the ones after the context are taken.
   */
  async encodeFrom(context: number): Promise<Int32Array[]> {
    const rows = await this.policy.encode(this.messages, true, {
      context,
      ...(this.tools ? { tools: this.tools } : {}),
    });
    const expected = this.messages.length - context;
    if (context > 0 && rows.length === this.messages.length) return rows.slice(context);
    if (rows.length !== expected)
      throw new PrefixContinuityError(
        `encode returned ${rows.length} sequences for the ${expected} messages after the first ${context}`,
      );
    return rows;
  }

  /** The whole conversation rendered again by the template (history: rerender): the prompt of the next call, with its roles. */
  async render(): Promise<{ ids: Int32Array; roles: Uint8Array }> {
    const rows = await this.encodeFrom(0);
    const ids: number[] = [];
    const roles: number[] = [];
    rows.forEach((row, i) => {
      const role = messageRole(at(this.messages, i));
      for (const id of row) {
        ids.push(id);
        roles.push(role);
      }
    });
    return { ids: Int32Array.from(ids), roles: Uint8Array.from(roles) };
  }
}
