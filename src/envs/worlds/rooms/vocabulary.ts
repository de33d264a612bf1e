// The rooms env's closed vocabulary, for the embedded model's word-level tokenizer: every token
// an observation or an action can contain, split the way that tokenizer splits text (runs of
// letters, digits and `_`; single punctuation characters). It is built from the fixed phrases of
// rules.ts, the noun pools, the directions, the tool names, the newline token and the stdlib
// tools' descriptions (std/envs/rooms.arl, shown to the model in the system prompt), so it is the
// same for every task of every size; tests check that sampled observations and walkthroughs stay
// inside it.
import { PHRASES } from "./rules.js";
import { COLORS, CONTAINER_NOUNS, DIRECTIONS, ITEM_NOUNS, KEY_NOUN, ROOM_NOUNS, SUPPORTER_NOUNS } from "./world.js";

const TOOL_NAMES = ["go", "take", "open", "put", "look", "inventory"] as const;

/** The harness's tool listing (text_action: `put <object> <target>: ...`) and the stdlib tools' descriptions. */
const TOOL_TEXT = [
  "Tools: <direction> <object> <target>",
  "Move through an exit. The exit to take.",
  "Pick up an object in the room or in an open container. The object to take.",
  "Open a closed container or door. What to open.",
  "Put a carried object into or onto something. The carried object. Where to put it.",
  "Describe the current room.",
  "List what you carry.",
];

/** Splits text into the tokenizer's units (newlines dropped). */
export function words(text: string): string[] {
  return text.match(/\w+|[^\s\w]/gu) ?? [];
}

let cached: readonly string[] | undefined;

export function roomsVocabulary(): readonly string[] {
  if (!cached) {
    const all = new Set<string>();
    const sources = [
      ...PHRASES,
      ...TOOL_TEXT,
      ...ROOM_NOUNS,
      ...COLORS,
      ...ITEM_NOUNS,
      KEY_NOUN,
      ...CONTAINER_NOUNS,
      ...SUPPORTER_NOUNS,
      ...DIRECTIONS,
      ...TOOL_NAMES,
    ];
    for (const text of sources) for (const w of words(text)) all.add(w);
    // The tokenizer keeps newlines as tokens; the first observation has them.
    all.add("\n");
    cached = Object.freeze([...all].sort());
  }
  return cached;
}
