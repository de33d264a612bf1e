// encode / decode / tokenize (docs/protocol.md): chat messages to token ids through the chat template, and ids
// back to text, over the word tokenizer (tokenizer.ts).
import { ragged, type EncodeParams, type Ragged } from "../../contracts/trainer-protocol.js";
import { rows } from "./batching.js";
import { invalidOnInputError } from "./errors.js";
import type { TrainerState } from "./state.js";

/**
 * One sequence per message from `p.context` on, already wrapped by the chat template. The template
 * is per message and prefix-preserving, so the messages already in the context are a plain cut;
 * `tools` and `tool_calls` are not rendered (the runtime describes tools in the system prompt and
 * a call is in the assistant's content).
 */
export function encode(state: TrainerState, p: EncodeParams): Ragged<Int32Array> {
  const { tokenizer } = state.conf;
  return invalidOnInputError(() => {
    const context = p.context ?? 0;
    const n = p.messages.length;
    if (context > n) throw new RangeError(`context: ${context} is more than the ${n} messages`);
    if (context === n && n > 0 && p.add_generation_prompt)
      throw new RangeError(
        "context: equals the number of messages, so no message is left to carry the generation prompt",
      );
    return ragged(tokenizer.encodeMessages(p.messages, p.add_generation_prompt).slice(context), Int32Array);
  });
}

export function decode(state: TrainerState, ids: Ragged<Int32Array>): string[] {
  const { tokenizer } = state.conf;
  return rows(ids).map((r) => tokenizer.decode(r));
}

/** Plain text to ids, no template (the agent gateway's forced tool-call openings, docs/gateway.md#forced-tool-calls). */
export function tokenize(state: TrainerState, texts: readonly string[]): Ragged<Int32Array> {
  const { tokenizer } = state.conf;
  return ragged(
    texts.map((t) => tokenizer.encodeText(t)),
    Int32Array,
  );
}
