// The word-level tokenizer and chat template of `builtin:tiny`.
//
// Token ids (deterministic for a given `vocabulary` from `configure`):
//   0 <pad>  1 <bos>  2 <eos>  3 <unk>
//   4 <system>  5 <user>  6 <tool>  7 <assistant>     role markers
//   8 <cap>     the next word is capitalised ("You" = <cap> you, when only "you" is a word)
//   9 <glue>    no space before the next piece, where one would be put by default
//   10 <space>  a space before the next piece, where none would be put by default
//   11 "\n", then the 32 ASCII punctuation characters, then 16 nibble tokens <0x0>..<0xF> (a
//   byte is two of them, high then low: 16 tokens instead of 256 keep the output layer small),
//   then the words of the runtime harness's own messages (HARNESS_WORDS: "No tool call found",
//   "Error: invalid arguments for ...", refusals), then the vocabulary's words in the order given
//   (duplicates and base tokens skipped), at most EMBEDDED_VOCABULARY_LIMIT of them: a word past
//   it is spelled as bytes like any other word outside the vocabulary.
//
// Text is split into units: runs of word characters (\w: ASCII letters, digits, `_`), single
// other non-space characters, and newlines. A unit in the vocabulary is one token (or <cap> and
// its lowercase form); consecutive units outside it form one raw run spelled as UTF-8 bytes
// (nibble pairs), whitespace between them included verbatim. So every text round-trips, up to
// whitespace between pieces: a run of spaces/tabs is one space, and whitespace at the end is
// dropped. Decoding puts one space between pieces except next to a newline, before closing
// punctuation (. , ; : ! ? ) ] } > ' %) and after opening punctuation (( [ { < ' $ # @); the
// encoder writes <glue> or <space> only where the text differs from that default. Special
// tokens (pad, bos, eos, unk, role markers) decode to nothing.
//
// Chat template: a message is its role marker, its content, then <eos> (the end-of-message
// token, which is also the stop token of generation):
//     <system> ... <eos>   <user> ... <eos>   <tool> ... <eos>
// The assistant's role marker is the generation prompt: `add_generation_prompt` appends
// <assistant> to the last message's sequence, and an assistant message is encoded as its
// content and <eos> only, because that is exactly what the model generates after the prompt.
// Within one request, a message followed by an assistant message also gets the <assistant>
// marker, so a whole conversation encoded at once is the same token stream as one built turn
// by turn: <user> ... <eos> <assistant> take key <eos> <tool> ... <eos> <assistant> ...
// No <bos> is added (the model's initial state plays its part).
import { at } from "../../contracts/checked.js";
import { EMBEDDED_VOCABULARY_LIMIT } from "../../contracts/trainer-protocol.js";

export const PAD = 0;
export const BOS = 1;
export const EOS = 2;
export const ROLE_IDS = { system: 4, user: 5, tool: 6, assistant: 7 } as const;
const CAP = 8;
const GLUE = 9;
const SPACE = 10;
const SPECIAL_NAMES = [
  "<pad>",
  "<bos>",
  "<eos>",
  "<unk>",
  "<system>",
  "<user>",
  "<tool>",
  "<assistant>",
  "<cap>",
  "<glue>",
  "<space>",
];
const PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
const BYTE_BASE = SPECIAL_NAMES.length + 1 + PUNCTUATION.length;
const NO_SPACE_BEFORE = new Set([".", ",", ";", ":", "!", "?", ")", "]", "}", ">", "'", "%"]);
const NO_SPACE_AFTER = new Set(["(", "[", "{", "<", "'", "$", "#", "@"]);
const UNIT = /\n|\w+|[^\s\w]/gu;
/** Words of the harness's messages (src/episode/harness.ts, src/contracts/tool-calls.ts), so they are not spelled in bytes. */
const HARNESS_WORDS = [
  "No",
  "tool",
  "call",
  "found",
  "Call",
  "one",
  "of",
  "Error",
  "invalid",
  "arguments",
  "for",
  "must",
  "be",
  "equal",
  "to",
  "the",
  "allowed",
  "values",
  "too",
  "many",
  "words",
  "which",
  "takes",
  "none",
  "there",
  "is",
  "no",
  "available",
  "Refused",
  "blocked",
  "by",
  "constraint",
  "did",
  "not",
  "finish",
  "within",
  "s",
  "Tools",
  "and",
  "or",
  "a",
  "an",
  "JSON",
  "object",
  "name",
  "valid",
  "have",
  "required",
  "property",
  "fewer",
  "than",
  "more",
  "characters",
  "items",
  "type",
  "string",
  "number",
];

export type Role = keyof typeof ROLE_IDS;

export interface ChatMessage {
  readonly role: Role;
  readonly content: string;
}

function defaultSpace(prev: string | null, next: string): boolean {
  if (prev === null || prev === "\n" || next === "\n") return false;
  return !NO_SPACE_BEFORE.has(next) && !NO_SPACE_AFTER.has(prev);
}

const capitalise = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

export class WordTokenizer {
  readonly tokens: readonly string[];
  private readonly index = new Map<string, number>();
  private readonly utf8 = new TextEncoder();
  private readonly utf8Decoder = new TextDecoder("utf-8", { fatal: false });

  constructor(vocabulary: readonly string[]) {
    const tokens = [...SPECIAL_NAMES, "\n", ...PUNCTUATION];
    for (let b = 0; b < 16; b++) tokens.push(`<0x${b.toString(16).toUpperCase()}>`);
    tokens.forEach((t, i) => {
      // Byte tokens and specials are not words: only "\n" and punctuation are matched as text.
      if (i >= SPECIAL_NAMES.length && i < BYTE_BASE) this.index.set(t, i);
    });
    const add = (w: unknown): boolean => {
      if (typeof w !== "string" || w === "" || this.index.has(w) || SPECIAL_NAMES.includes(w)) return false;
      this.index.set(w, tokens.length);
      tokens.push(w);
      return true;
    };
    for (const w of HARNESS_WORDS) add(w);
    // Past the limit a word is spelled as bytes: the model's size stays bounded.
    let taken = 0;
    for (const w of vocabulary) if (taken < EMBEDDED_VOCABULARY_LIMIT && add(w)) taken++;
    this.tokens = tokens;
  }

  /** The word tokens (harness words and the vocabulary `configure` gave, deduplicated), for checkpoints. */
  get words(): string[] {
    return this.tokens.slice(BYTE_BASE + 16);
  }

  get size(): number {
    return this.tokens.length;
  }

  isNibble(id: number): boolean {
    return id >= BYTE_BASE && id < BYTE_BASE + 16;
  }

  /** Plain text to ids (no template). */
  encodeText(text: string): number[] {
    const out: number[] = [];
    let prev: string | null = null;
    let last = 0;
    // A raw run of units outside the vocabulary, collected until a known unit.
    let run: string | null = null;
    let runSpaced = false;
    const flushRun = () => {
      if (run === null) return;
      const spaced = runSpaced;
      const d = defaultSpace(prev, run);
      if (spaced && !d) out.push(SPACE);
      else if (!spaced && d) out.push(GLUE);
      for (const b of this.utf8.encode(run)) out.push(BYTE_BASE + (b >> 4), BYTE_BASE + (b & 15));
      prev = run;
      run = null;
    };
    for (const m of text.matchAll(UNIT)) {
      const unit = m[0];
      const gap = text.slice(last, m.index);
      last = m.index + unit.length;
      const spaced = gap.length > 0;
      let ids: number[] | undefined;
      const direct = this.index.get(unit);
      if (direct !== undefined) ids = [direct];
      else {
        const lower = unit.toLowerCase();
        const low = this.index.get(lower);
        if (low !== undefined && capitalise(lower) === unit && lower !== unit) ids = [CAP, low];
      }
      if (!ids) {
        if (run === null) {
          run = unit;
          runSpaced = spaced;
        } else run += gap + unit;
        continue;
      }
      flushRun();
      const d = defaultSpace(prev, unit);
      if (spaced && !d) out.push(SPACE);
      else if (!spaced && d) out.push(GLUE);
      out.push(...ids);
      prev = unit;
    }
    flushRun();
    return out;
  }

  /** Ids to text; special tokens are dropped. */
  decode(ids: ArrayLike<number>): string {
    let text = "";
    let prev: string | null = null;
    let override: boolean | null = null;
    let cap = false;
    let bytes: number[] = [];
    let high = -1; // the pending high nibble of a byte
    const put = (piece: string) => {
      const space = override ?? defaultSpace(prev, piece);
      text += space ? ` ${piece}` : piece;
      prev = piece;
      override = null;
    };
    const flush = () => {
      high = -1; // a lone high nibble is dropped
      if (bytes.length === 0) return;
      const piece = this.utf8Decoder.decode(Uint8Array.from(bytes));
      bytes = [];
      cap = false;
      put(piece);
    };
    for (let k = 0; k < ids.length; k++) {
      const id = at(ids, k);
      if (this.isNibble(id)) {
        if (high < 0) high = id - BYTE_BASE;
        else {
          bytes.push(high * 16 + id - BYTE_BASE);
          high = -1;
        }
        continue;
      }
      flush();
      if (id === GLUE) override = false;
      else if (id === SPACE) override = true;
      else if (id === CAP) cap = true;
      else if (id >= SPECIAL_NAMES.length && id < this.tokens.length) {
        const w = at(this.tokens, id);
        put(cap ? capitalise(w) : w);
        cap = false;
      }
      // Other specials and out-of-range ids decode to nothing.
    }
    flush();
    return text;
  }

  /** The chat template (see the top of this file): one id sequence per message. */
  encodeMessages(messages: readonly ChatMessage[], addGenerationPrompt: boolean): number[][] {
    const seqs = messages.map((m, k) => {
      const role = ROLE_IDS[m.role];
      if (role === undefined)
        throw new RangeError(`message ${k}: role must be system, user, tool or assistant, not '${String(m.role)}'`);
      if (typeof m.content !== "string") throw new RangeError(`message ${k}: content must be a string`);
      const body = this.encodeText(m.content);
      return m.role === "assistant" ? [...body, EOS] : [role, ...body, EOS];
    });
    messages.forEach((m, k) => {
      const next = messages[k + 1];
      if ((next && next.role === "assistant") || (!next && addGenerationPrompt)) at(seqs, k).push(ROLE_IDS.assistant);
    });
    if (messages.length === 0 && addGenerationPrompt) seqs.push([ROLE_IDS.assistant]);
    return seqs;
  }
}
