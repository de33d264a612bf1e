// Comment attachment: every comment of a file is given a place relative to the syntax tree
// (before, after or inside the node it sits next to), so that the node printers print it there.
import type { IToken } from "chevrotain";
import type * as ast from "../ast.js";
import * as t from "../tokens.js";
import { at } from "../../contracts/checked.js";

/** A comment's text as the formatter prints it: line ends normalized, trailing blanks removed. */
export function commentText(token: IToken): string {
  return token.image
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((l) => l.replace(/[ \t]+$/, ""))
    .join("\n");
}

export interface Comment {
  readonly start: number;
  readonly end: number;
  readonly text: string;
  readonly isDoc: boolean;
  /** Runs to the end of its line (`//`, `///`): something printed after it needs a new line. */
  readonly isLine: boolean;
}

/** A node that sits between brackets, separated from its neighbours: entry, item, argument. */
interface Span {
  readonly node: object;
  readonly start: number;
  readonly end: number;
}

/** Where comments can sit between spans: a document, block body, record, list or call. */
interface Container {
  readonly key: object;
  /** Offsets just after the opening bracket and of the closing one. */
  readonly open: number;
  readonly close: number;
  readonly spans: readonly Span[];
}

/** The formatter cannot print this tree without changing its meaning (reported as a bug). */
export class FormatError extends Error {}

/** The last index of `items` where `before` holds, for a `before` true on a prefix; or -1. */
function lastIndex<T>(items: readonly T[], before: (item: T) => boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(at(items, mid))) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

function span(node: ast.Node): Span {
  // An unnamed argument's range includes the parentheses around it, which the printer may drop:
  // its span is its value's, as for list items, so comments there are placed the same way.
  const r = node.kind === "Argument" && !node.name ? node.value.range : node.range;
  return { node, start: r.start.offset, end: r.end.offset };
}

/** Where each comment of a file goes, filled in once per file by `place`. */
export class CommentPlacement {
  private readonly comments: Comment[];
  private readonly commentEnds = new Map<number, number>();
  /** Comments between spans: on their own lines before a span, after it on its line, or last. */
  readonly leading = new Map<object, Comment[]>();
  readonly trailing = new Map<object, Comment[]>();
  readonly dangling = new Map<object, Comment[]>();
  /** Comments inside a span, printed before the token that followed them. */
  readonly anchored = new Map<object, Comment[]>();
  /** Comments before the `{` of a block or the `(` of a call's arguments. */
  readonly beforeOpen = new Map<object, Comment[]>();

  constructor(
    readonly text: string,
    tokens: readonly IToken[],
  ) {
    this.comments = tokens.map((tok) => ({
      start: tok.startOffset,
      end: tok.startOffset + tok.image.length,
      text: commentText(tok),
      isDoc: tok.tokenType === t.DocComment,
      isLine: tok.tokenType === t.DocComment || tok.tokenType === t.LineComment,
    }));
    for (const c of this.comments) this.commentEnds.set(c.start, c.end);
  }

  place(document: ast.Document): void {
    const spans = [...document.imports, ...document.blocks].map(span);
    this.distribute({ key: document, open: 0, close: this.text.length, spans }, this.comments);
  }

  private push(map: Map<object, Comment[]>, key: object, c: Comment): void {
    const list = map.get(key);
    if (list) list.push(c);
    else map.set(key, [c]);
  }

  private hasLineBreak(from: number, to: number): boolean {
    return /[\n\r]/.test(this.text.slice(from, to));
  }

  /** Sorts a container's comments into its spans (handled recursively) and its gaps. */
  private distribute(container: Container, comments: readonly Comment[]): void {
    if (comments.length === 0) return;
    const { spans } = container;
    const inside: Comment[][] = spans.map(() => []);
    for (const c of comments) {
      const idx = lastIndex(spans, (s) => s.start <= c.start);
      const prev = spans[idx];
      if (prev && c.start < prev.end) at(inside, idx).push(c);
      else if (prev && !this.hasLineBreak(prev.end, c.start)) this.push(this.trailing, prev.node, c);
      else if (idx + 1 < spans.length) this.push(this.leading, at(spans, idx + 1).node, c);
      else this.push(this.dangling, container.key, c);
    }
    spans.forEach((s, i) => this.distributeInside(s, at(inside, i)));
  }

  /** Comments inside one span: into nested containers, or before the next token of the span. */
  private distributeInside(s: Span, comments: readonly Comment[]): void {
    if (comments.length === 0) return;
    const anchors: { offset: number; map: Map<object, Comment[]>; key: object }[] = [];
    const containers: Container[] = [];
    const anchor = (node: ast.Node, map = this.anchored) =>
      anchors.push({ offset: node.range.start.offset, map, key: node });
    const work: ast.Node[] = [s.node as ast.Node];
    for (let n = work.pop(); n !== undefined; n = work.pop()) {
      switch (n.kind) {
        case "Import":
          anchor(n.path);
          if (n.alias) anchor(n.alias);
          break;
        case "Block": {
          anchor(n.type);
          if (n.name) anchor(n.name);
          for (const p of n.extends?.parts ?? []) anchor(p);
          const headerEnd = (n.extends ?? n.name ?? n.type).range.end.offset;
          const brace = this.skipTrivia(headerEnd, false);
          anchors.push({ offset: brace, map: this.beforeOpen, key: n });
          containers.push({ key: n, open: brace + 1, close: n.range.end.offset - 1, spans: n.entries.map(span) });
          break;
        }
        case "Field":
          for (const k of n.path) anchor(k);
          work.push(n.value);
          break;
        case "Argument":
          if (n.name) anchor(n.name);
          work.push(n.value);
          break;
        case "Unary":
          anchor(n);
          work.push(n.operand);
          break;
        case "Binary":
          work.push(n.left, n.right);
          break;
        case "When":
          work.push(n.value, n.condition);
          break;
        case "Member":
          work.push(n.object);
          anchor(n.property);
          break;
        case "Call": {
          work.push(n.callee);
          const paren = this.skipTrivia(n.callee.range.end.offset, true);
          anchors.push({ offset: paren, map: this.beforeOpen, key: n });
          containers.push({ key: n, open: paren + 1, close: n.range.end.offset - 1, spans: n.args.map(span) });
          break;
        }
        case "List":
          anchor(n);
          containers.push({
            key: n,
            open: n.range.start.offset + 1,
            close: n.range.end.offset - 1,
            spans: n.items.map(span),
          });
          break;
        case "Record":
          anchor(n);
          containers.push({
            key: n,
            open: n.range.start.offset + 1,
            close: n.range.end.offset - 1,
            spans: n.entries.map(span),
          });
          break;
        case "Invalid":
        case "Document":
        case "Reference":
          throw new FormatError(`unexpected ${n.kind} node`);
        default:
          anchor(n); // literals, identifiers, keys
      }
    }
    anchors.sort((a, b) => a.offset - b.offset);
    containers.sort((a, b) => a.open - b.open);
    const nested = containers.map((): Comment[] => []);
    for (const c of comments) {
      // Containers at one level do not overlap: only the last one opening before `c` can hold it.
      const k = lastIndex(containers, (container) => container.open <= c.start);
      const container = containers[k];
      if (container && c.end <= container.close) {
        at(nested, k).push(c);
        continue;
      }
      const a = anchors[lastIndex(anchors, (x) => x.offset < c.end) + 1];
      if (a) this.push(a.map, a.key, c);
      else this.push(this.trailing, s.node, c);
    }
    containers.forEach((k, i) => this.distribute(k, at(nested, i)));
  }

  /** The offset of the first character at or after `from` that is not blank or a comment. */
  skipTrivia(from: number, parens: boolean): number {
    let p = from;
    while (p < this.text.length) {
      const end = this.commentEnds.get(p);
      if (end !== undefined) p = end;
      else if (/\s/.test(this.text.charAt(p)) || (parens && this.text[p] === ")")) p++;
      else return p;
    }
    throw new FormatError("expected a bracket after a header");
  }

  hasCommentIn(from: number, to: number): boolean {
    const c = this.comments[lastIndex(this.comments, (x) => x.start < from) + 1];
    return c !== undefined && c.start < to;
  }

  /** Whether the source has a blank line between two offsets. */
  blankBetween(from: number, to: number): boolean {
    const segments = this.text.slice(from, to).split(/\r\n|\r|\n/);
    for (let i = 1; i < segments.length - 1; i++) if (at(segments, i).trim() === "") return true;
    return false;
  }
}
