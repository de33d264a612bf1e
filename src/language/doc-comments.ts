// Doc comments: a run of `///` lines documents the declaration that starts right after it.
import type { IToken } from "chevrotain";
import { tokenEndOffset } from "./lexer.js";
import * as t from "./tokens.js";

/**
 * Maps the offset of the first character after each run of `///` lines to the run's text.
 * `comments` may hold the doc comments alone: another comment between two of them is text
 * that is not white space, which ends the run just the same.
 */
export function indexDocComments(comments: readonly IToken[], text: string): Map<number, string> {
  const docs = new Map<number, string>();
  let run: string[] = [];
  let runEnd = -1;
  const flush = () => {
    if (run.length > 0) {
      let next = runEnd;
      while (next < text.length && /\s/.test(text.charAt(next))) next++;
      docs.set(next, run.join("\n"));
    }
    run = [];
  };
  for (const c of comments) {
    if (c.tokenType !== t.DocComment) {
      flush();
      continue;
    }
    if (run.length > 0 && !/^\s*$/.test(text.slice(runEnd, c.startOffset))) flush();
    run.push(c.image.slice(3).replace(/^ /, "").trimEnd());
    runEnd = tokenEndOffset(c);
  }
  flush();
  return docs;
}
