// The model's context as a bound on every agent request (docs/gateway.md#exact-tokens-and-rewrites):
// a prompt must fit the context, and one that cannot is refused before its megabytes are
// tokenized. A token stands for at most `maxTokenBytes` bytes of text, so a text with more than
// context x maxTokenBytes bytes cannot fit; whitespace is not counted, since a tokenizer may fold
// it away (builtin:tiny's folds runs of spaces into one).
import type { Message, Policy } from "../../episode/policy.js";
import { GatewayError } from "./contract.js";

/** What bounds a session's prompts: the model's context in tokens, and the most text bytes one token stands for. */
export interface ModelContext {
  /** configure's `model.max_context`; null: the trainer reported none. */
  readonly maxContext: number | null;
  /** The most UTF-8 bytes one token of the vocabulary decodes to; null: unknown (no early bound on text). */
  readonly maxTokenBytes: number | null;
}

/** The most tokens a context may hold, and whether that is the harness's budget (else the model's context). */
export interface ContextLimit {
  readonly tokens: number;
  readonly harness: boolean;
}

/** harness.max_total_tokens or the model's context, the smaller; undefined when neither bounds it. */
export function contextLimit(maxTotalTokens: number | null, model: ModelContext | undefined): ContextLimit | undefined {
  const context = model?.maxContext ?? null;
  if (maxTotalTokens !== null && (context === null || maxTotalTokens <= context))
    return { tokens: maxTotalTokens, harness: true };
  return context === null ? undefined : { tokens: context, harness: false };
}

/**
 * What makes messages' text too long for the context, told before anything is tokenized: more
 * non-whitespace bytes than the context's tokens can stand for; undefined when it may fit.
 */
export function textPastContext(
  messages: readonly Message[],
  limit: ContextLimit | undefined,
  model: ModelContext | undefined,
): string | undefined {
  const perToken = model?.maxTokenBytes ?? null;
  if (limit === undefined || perToken === null) return undefined;
  const most = limit.tokens * perToken;
  let bytes = 0;
  for (const m of messages) {
    bytes += nonSpaceBytes(m.content);
    if (bytes > most)
      return `the messages' text has more than ${most} bytes besides whitespace (a token of this model stands for at most ${perToken})`;
  }
  return undefined;
}

/** A prompt past the model's context (not the harness's budget): this request alone is refused. */
export function contextLengthError(tokens: number, what: string): GatewayError {
  return new GatewayError(
    400,
    `This model's maximum context length is ${tokens} tokens, and ${what}, which leaves none to generate: shorten the conversation`,
    "invalid_request_error",
    "messages",
    "context_length_exceeded",
  );
}

/** Token ids decoded per request while measuring the vocabulary. */
const DECODE_CHUNK = 16_384;

/** The most UTF-8 bytes any of the `vocabSize` tokens decodes to (at least 1), measured once per run. */
export async function maxTokenBytes(policy: Policy, vocabSize: number): Promise<number | null> {
  if (!policy.decodeEach || vocabSize <= 0) return null;
  let most = 1;
  for (let from = 0; from < vocabSize; from += DECODE_CHUNK) {
    const ids = Int32Array.from({ length: Math.min(DECODE_CHUNK, vocabSize - from) }, (_, i) => from + i);
    for (const text of await policy.decodeEach(ids)) most = Math.max(most, Buffer.byteLength(text, "utf8"));
  }
  return most;
}

/** The UTF-8 length of `text` without its whitespace (what JavaScript's `\s` matches). */
export function nonSpaceBytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if (c !== 0x20 && (c < 0x09 || c > 0x0d)) bytes++;
    } else if (c < 0x800) {
      if (c !== 0xa0) bytes += 2;
    } else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4;
      i++;
    } else if (!isWideSpace(c)) {
      bytes += 3;
    }
  }
  return bytes;
}

function isWideSpace(c: number): boolean {
  return (
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}
