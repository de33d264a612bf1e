// Incremental parsing: the parse of a text that differs from an earlier parsed one inside one
// top-level block, equal to `parse` of the new text, at the cost of lexing and parsing that block.
// The earlier text is cut into segments that tile it: the imports (header), one span per
// top-level block (from the end of the previous block to the end of its own, so the comments and
// blank lines above a block belong to it) and what follows the last block (trailer). The changed
// range (common prefix and suffix of the two texts) must lie inside one block's span: that span's
// new text is lexed and parsed alone, with its tokens moved to where the span lies in the new
// text, so that its AST's locations are read from the new text's line index; the blocks before it
// are reused as they are, the blocks after it with their locations shifted (offsets by the
// length change, lines by the line change, columns only on the line where the span ends).
//
// Equality with a full parse holds because a clean parse's blocks are independent: the grammar
// reads a block from its first token to its closing `}`, that `}` is a token of its own (what
// follows lexes the same whatever precedes it), and with no error there is no recovery reaching
// across blocks. So a full parse is done instead whenever that reasoning does not apply: the
// earlier parse had any diagnostic, the change touches the header or the trailer, the span's
// new text does not parse cleanly to exactly one block of the same type, with a name exactly
// when the old one had one (what the top level checks of neighbouring blocks), ending where the
// span ends; or the span is the first one and begins right after an import (a change there could
// join the import's last token).
import type { IToken } from "chevrotain";
import { LineIndex, type Position } from "../contracts/source-range.js";
import type { Block, Document } from "./ast.js";
import { CommentTokens, lex } from "./lexer.js";
import { parse, parseTokens, type ParseResult } from "./parse.js";

/** Counts of how texts were parsed (for tests and the benchmark). */
export const incrementalParseStats = { reused: 0, incremental: 0, full: 0 };

/** `parse(text, file)`, computed from `previous` (a parse of another text of `file`) where it can be. */
export function reparse(previous: ParseResult, text: string, file: string): ParseResult {
  if (previous.text === text && previous.document.file === file) {
    incrementalParseStats.reused++;
    return previous;
  }
  const result =
    previous.document.file === file && previous.diagnostics.length === 0 ? spliced(previous, text, file) : undefined;
  if (result) {
    incrementalParseStats.incremental++;
    return result;
  }
  incrementalParseStats.full++;
  return parse(text, file);
}

function spliced(previous: ParseResult, text: string, file: string): ParseResult | undefined {
  const old = previous.text;
  const blocks = previous.document.blocks;
  // The changed range: [from, oldTo) in the old text became [from, newTo) in the new one.
  const limit = Math.min(old.length, text.length);
  let from = 0;
  while (from < limit && old.charCodeAt(from) === text.charCodeAt(from)) from++;
  let suffix = 0;
  while (suffix < limit - from && old.charCodeAt(old.length - 1 - suffix) === text.charCodeAt(text.length - 1 - suffix))
    suffix++;
  const oldTo = old.length - suffix;
  const delta = text.length - old.length;

  const headerEnd = previous.document.imports.reduce((end, i) => Math.max(end, i.range.end.offset), 0);
  let index = -1;
  let start = headerEnd;
  for (let i = 0; i < blocks.length; i++) {
    const end = blocks[i]?.range.end.offset ?? start;
    // A pure insertion right after a block's `}` belongs to the next span (it may be a new block's start).
    if (from >= start && from < end && oldTo <= end) {
      index = i;
      break;
    }
    start = end;
  }
  if (index < 0) return undefined;
  if (index === 0 && headerEnd > 0 && from === headerEnd) return undefined;
  const oldBlock = blocks[index] as Block;
  const oldEnd = oldBlock.range.end.offset;
  const newEnd = oldEnd + delta;
  if (newEnd <= start || text.charCodeAt(newEnd - 1) !== 125 /* } */) return undefined;

  const lines = new LineIndex(text);
  const lexed = lex(text.slice(start, newEnd), file);
  if (lexed.diagnostics.length > 0) return undefined;
  const origin = lines.position(start);
  for (const tok of lexed.tokens) moveToken(tok, start, origin);
  for (const tok of lexed.docComments) moveToken(tok, start, origin);
  // Fields named, not spread: a spread would lex the piece's comments, which no one reads.
  const piece = parseTokens(
    {
      tokens: lexed.tokens,
      docComments: lexed.docComments,
      commentTokens: lexed.commentTokens,
      diagnostics: lexed.diagnostics,
      lines,
    },
    text,
    file,
  );
  const block = piece.document.blocks[0];
  if (piece.diagnostics.length > 0 || piece.document.blocks.length !== 1 || piece.document.imports.length > 0 || !block)
    return undefined;
  if (
    block.type.name !== oldBlock.type.name ||
    (block.name === undefined) !== (oldBlock.name === undefined) ||
    block.range.end.offset !== newEnd
  )
    return undefined;

  const shift = shifter(previous.lines.position(oldEnd), lines.position(newEnd), delta);
  const document: Document = {
    ...previous.document,
    blocks: [...blocks.slice(0, index), block, ...blocks.slice(index + 1).map((b) => shiftNode(b, shift))],
    range: lines.range(0, text.length),
  };
  // Comments are lexed from the new text when asked for, as `parse` does (never from
  // `previous`: a chain of edits would keep every earlier parse alive).
  const commentTokens = new CommentTokens(text);
  return {
    document,
    diagnostics: [],
    get comments() {
      return commentTokens.all;
    },
    lines,
    text,
  };
}

/** A token lexed from a piece of text that starts at `origin` in the whole, moved to where it lies in the whole. */
function moveToken(tok: IToken, start: number, origin: Position): void {
  const move = (line: number | undefined, column: number | undefined): [number | undefined, number | undefined] =>
    line === undefined || column === undefined
      ? [line, column]
      : [line + origin.line - 1, line === 1 ? column + origin.column - 1 : column];
  const m = tok;
  [m.startLine, m.startColumn] = move(tok.startLine, tok.startColumn);
  [m.endLine, m.endColumn] = move(tok.endLine, tok.endColumn);
  m.startOffset += start;
  if (m.endOffset !== undefined) m.endOffset += start;
}

type Shift = (p: Position) => Position;

/**
 * Where a position at or after the old span's end lies in the new text: `delta` characters on,
 * on the line as many lines on as the span gained; its column moves only on the span's last line.
 */
function shifter(oldEnd: Position, newEnd: Position, delta: number): Shift {
  const lineDelta = newEnd.line - oldEnd.line;
  const columnDelta = newEnd.column - oldEnd.column;
  if (delta === 0 && lineDelta === 0 && columnDelta === 0) return (p) => p;
  return (p) => ({
    line: p.line + lineDelta,
    column: p.line === oldEnd.line ? p.column + columnDelta : p.column,
    offset: p.offset + delta,
  });
}

/**
 * A copy of an AST node with every position shifted. AST nodes are plain data (objects, arrays,
 * strings, numbers, booleans) and positions are the only objects with an `offset`. Written with
 * plain loops: this copy is most of an incremental parse's time.
 */
function shiftNode<T>(node: T, shift: Shift): T {
  if (typeof node !== "object" || node === null) return node;
  if (Array.isArray(node)) {
    const out: unknown[] = new Array(node.length);
    for (let i = 0; i < node.length; i++) out[i] = shiftNode(node[i], shift);
    return out as T;
  }
  if ("offset" in node) return shift(node as unknown as Position) as T;
  const out: Record<string, unknown> = {};
  for (const k in node) out[k] = shiftNode(node[k], shift);
  return out as T;
}
