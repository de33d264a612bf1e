// Formatting with the canonical formatter (`arl fmt`): one edit covering the part of the text
// that changes (common prefix and suffix kept, so the editor's cursor and folds stay put). A
// file with syntax errors, or one the formatter refuses, gets no edits.
import type { TextEdit } from "vscode-languageserver/node";
import { LineIndex } from "../contracts/source-range.js";
import { format } from "../language/printer.js";
import { lspRangeOf } from "./convert.js";

export function formatDocument(text: string, file: string): TextEdit[] {
  let result;
  try {
    result = format(text, file);
  } catch {
    return [];
  }
  if (!("output" in result) || result.output === text) return [];
  const output = result.output;
  let start = 0;
  const max = Math.min(text.length, output.length);
  while (start < max && text.charCodeAt(start) === output.charCodeAt(start)) start++;
  let endOld = text.length;
  let endNew = output.length;
  while (endOld > start && endNew > start && text.charCodeAt(endOld - 1) === output.charCodeAt(endNew - 1)) {
    endOld--;
    endNew--;
  }
  // Never split a CRLF pair or a surrogate pair.
  while (start > 0 && (isLowSurrogate(text.charCodeAt(start)) || (text[start - 1] === "\r" && text[start] === "\n")))
    start--;
  while (
    endOld < text.length &&
    (isLowSurrogate(text.charCodeAt(endOld)) || (text[endOld - 1] === "\r" && text[endOld] === "\n"))
  ) {
    endOld++;
    endNew++;
  }
  const lines = new LineIndex(text);
  return [{ range: lspRangeOf(lines, start, endOld), newText: output.slice(start, endNew) }];
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
