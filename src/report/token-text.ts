// The text of single tokens, where it can be had without starting a trainer: a builtin:tiny run
// on the embedded trainer records its word vocabulary in every checkpoint (trainer.json), and its
// tokenizer is deterministic given that vocabulary, so the same tokenizer is rebuilt here.
// Any other model's tokenizer lives in its trainer process: for those only ids are shown.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { WordTokenizer } from "../trainer/embedded/tokenizer.js";

export interface TokenText {
  /** Each id's token as the tokenizer spells it (`<0xA>` for a byte nibble, `<eos>` for a special). */
  piece(id: number): string;
  /** Ids back to text, as the trainer's decode writes it. */
  decode(ids: ArrayLike<number>): string;
  /** Where the tokenizer came from, for the reader. */
  readonly source: string;
}

interface TinyCheckpoint {
  readonly model?: unknown;
  readonly vocabulary?: unknown;
  readonly shape?: { readonly vocab?: unknown };
}

/** The latest checkpoint's trainer.json of a run directory, if any. */
function latestTrainerState(runDir: string): { file: string; state: TinyCheckpoint } | undefined {
  const dir = path.join(runDir, "checkpoints");
  if (!existsSync(dir)) return undefined;
  const names = readdirSync(dir)
    .filter((n) => /^iteration-\d+$/.test(n))
    .sort()
    .reverse();
  for (const name of names) {
    const file = path.join(dir, name, "trainer.json");
    if (!existsSync(file)) continue;
    try {
      return { file, state: JSON.parse(readFileSync(file, "utf8")) as TinyCheckpoint };
    } catch {
      continue;
    }
  }
  return undefined;
}

/**
 * The run's token text when its policy is builtin:tiny saved by the embedded trainer; otherwise
 * a sentence saying why there is none.
 */
export function tokenTextOf(runDir: string): TokenText | { readonly unavailable: string } {
  const found = latestTrainerState(runDir);
  if (!found) return { unavailable: "the run has no checkpoint yet, and token text needs the run's tokenizer" };
  const { model, vocabulary, shape } = found.state;
  if (model !== "builtin:tiny" || !Array.isArray(vocabulary) || !vocabulary.every((w) => typeof w === "string")) {
    return {
      unavailable: "the model's tokenizer lives in its trainer (only builtin:tiny's is rebuilt from its checkpoint)",
    };
  }
  const tokenizer = new WordTokenizer(vocabulary);
  // A vocabulary that does not rebuild the model's own size is not the one it was trained with.
  if (shape?.vocab !== tokenizer.size)
    return {
      unavailable: `the checkpoint's vocabulary gives ${tokenizer.size} tokens, its model has ${String(shape?.vocab)}`,
    };
  return {
    piece: (id) => tokenizer.tokens[id] ?? `<id ${id}>`,
    decode: (ids) => tokenizer.decode(ids),
    source: `builtin:tiny's tokenizer, rebuilt from ${path.relative(runDir, found.file)}`,
  };
}
