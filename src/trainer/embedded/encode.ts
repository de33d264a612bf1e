// encode / decode (docs/protocol.md): chat messages to token ids through the chat template, and ids
// back to text, over the word tokenizer (tokenizer.ts).
import { ragged, type EncodeParams, type Ragged } from "../../contracts/trainer-protocol.js";
import { rows } from "./batching.js";
import { invalidOnInputError } from "./errors.js";
import type { TrainerState } from "./state.js";

/** One sequence per message, already wrapped by the chat template. */
export function encode(state: TrainerState, p: EncodeParams): Ragged<Int32Array> {
  const { tokenizer } = state.conf;
  return invalidOnInputError(() => ragged(tokenizer.encodeMessages(p.messages, p.add_generation_prompt), Int32Array));
}

export function decode(state: TrainerState, ids: Ragged<Int32Array>): string[] {
  const { tokenizer } = state.conf;
  return rows(ids).map((r) => tokenizer.decode(r));
}
