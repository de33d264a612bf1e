// The template's generation prompt (`<|im_start|>assistant\n`) as ids. A demonstrated assistant
// turn (a walkthrough, an SFT record) is rendered by the template with that header; in an RL
// episode the header is the prompt the harness gives and the model generates what follows, so
// the cold start must treat it the same way: context, not a target.
import { last } from "../contracts/checked.js";

/** Encodes messages with or without the generation prompt; the last row is the last message's. */
type EncodeLast = (addGenerationPrompt: boolean) => Promise<readonly Int32Array[]>;

/** `ids` after its leading `prefix`; undefined when it does not start with it. */
export function afterPrefix(ids: Int32Array, prefix: Int32Array): Int32Array | undefined {
  if (prefix.length > ids.length) return undefined;
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return undefined;
  return ids.subarray(prefix.length);
}

/**
 * The ids the generation prompt adds after the last message: its sequence encoded with the prompt
 * minus the same without it. Empty when the template puts the header elsewhere.
 */
export async function generationPromptIds(encode: EncodeLast): Promise<Int32Array> {
  const withPrompt = last(await encode(true));
  return afterPrefix(withPrompt, last(await encode(false)))?.slice() ?? new Int32Array(0);
}
