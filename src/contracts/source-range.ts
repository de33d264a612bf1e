// Source positions: 1-based lines and columns (as the CLI prints them), 0-based offsets, end
// exclusive. The language server converts to LSP's 0-based positions at its boundary.
import { at } from "./checked.js";

export interface Position {
  readonly line: number;
  readonly column: number;
  readonly offset: number;
}

export interface Range {
  readonly start: Position;
  readonly end: Position;
}

/** Maps offsets of one text to line and column, in O(log lines) per lookup. */
export class LineIndex {
  private readonly lineStarts: number[];
  /** The line of the previous lookup: lookups come mostly in source order, so start there. */
  private hint = 0;

  constructor(readonly text: string) {
    const starts = [0];
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (ch === 10) starts.push(i + 1);
      else if (ch === 13) {
        if (text.charCodeAt(i + 1) === 10) i++;
        starts.push(i + 1);
      }
    }
    this.lineStarts = starts;
  }

  get lineCount(): number {
    return this.lineStarts.length;
  }

  position(offset: number): Position {
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    const starts = this.lineStarts;
    const h = this.hint;
    const hinted = starts[h];
    const after = starts[h + 1];
    if (hinted !== undefined && hinted <= clamped && (after === undefined || after > clamped)) {
      return { line: h + 1, column: clamped - hinted + 1, offset: clamped };
    }
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (at(starts, mid) <= clamped) lo = mid;
      else hi = mid - 1;
    }
    this.hint = lo;
    return { line: lo + 1, column: clamped - at(starts, lo) + 1, offset: clamped };
  }

  range(startOffset: number, endOffset: number): Range {
    return { start: this.position(startOffset), end: this.position(Math.max(startOffset, endOffset)) };
  }

  /** The text of 1-based line `line`, without its line break. */
  lineText(line: number): string {
    const start = this.lineStarts[line - 1];
    if (start === undefined) return "";
    const next = this.lineStarts[line];
    return this.text.slice(start, next ?? this.text.length).replace(/\r?\n$|\r$/, "");
  }

  offsetAt(line: number, column: number): number {
    const start = at(this.lineStarts, Math.max(0, Math.min(line - 1, this.lineStarts.length - 1)));
    return Math.min(this.text.length, start + Math.max(0, column - 1));
  }
}
