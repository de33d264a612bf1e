// The canonical formatter (`arl fmt`): AST + comments -> text, in one style with no options.
//
// Style rules (the tests in test/language/printer.test.ts pin them down):
// - 2-space indentation, lines of at most 100 columns where a line break is allowed, LF line ends,
//   no trailing whitespace, one final newline.
// - Imports first, one per line, then one blank line; exactly one blank line between top-level
//   blocks. Elsewhere a run of blank lines between entries, items or comments becomes one blank
//   line; blank lines right after an opening bracket or before a closing one are dropped.
// - Blocks `type name extends ref { ... }` and records `{ ... }`: one entry per line, without
//   commas. Such a block or record stays on one line (`{ a: 1, b: 2 }`, entries separated by
//   ", ") only when it was on one line in the input, holds no comment and fits in 100 columns:
//   the output keeps all three properties, so formatting is idempotent. Empty ones are `{}`.
// - Lists and call arguments: on one line with ", " when they fit, otherwise one item per line,
//   each followed by a comma (so the last one too).
// - `key: value` with one space; keys print as written (bare or quoted); numbers keep their
//   spelling. Strings are re-escaped: `\"`, `\\`, `\n`, `\t`, `\r`, `\0`, and `\uXXXX` for other
//   control characters, invisible separators, non-space blanks and lone surrogates.
// - `"""` strings stay multi-line, their text on its own lines two columns deeper than the line
//   that opens them and the closing quotes at that line's indentation, so that the language's
//   dedent gives back the same value; `""""""` when empty. In their text, runs of three or more
//   quotes, a line's last blank and, when every line is indented, the first line's first blank
//   are escaped (the lexer and dedent would otherwise change the value).
// - Expressions get the fewest parentheses that keep their structure (`(1).x` keeps them: `1.x`
//   is one malformed number). A key ending in a digit-led segment is followed by ` .` (`2x .b`).
// - Every comment is kept: comments between entries, imports, blocks, list items or call
//   arguments stay there (on their own lines, or after the item when they were on its last
//   line); comments before a closing bracket or at the end of the file stay there too. A comment
//   inside an expression or a header is printed just before the token that followed it.
//   Comments force the construct around them onto several lines. `///` comments stay right
//   above what they document; where the input kept a `///` run apart from the next entry with a
//   token (`/// x` then `, y: 1`), a line holding only `,` keeps it apart in the output.
//
// Safety: the output is parsed again and compared with the input (AST without ranges, and the
// comments); if they differ, the input is refused with an internal-error diagnostic rather than
// being rewritten with a different meaning.
import type { IToken } from "chevrotain";
import { hasErrors, type Diagnostic } from "../diagnostics/diagnostic.js";
import type * as ast from "./ast.js";
import { expressionPrecedence, precedence } from "./ast.js";
import { parse } from "./parse.js";
import * as t from "./tokens.js";

/** The column limit for lists, call arguments and one-line blocks. */
export const LINE_WIDTH = 100;
const INDENT = 2;

export type FormatResult = { readonly output: string } | { readonly diagnostics: Diagnostic[] };

/**
 * Formats one file. Refuses (returns the diagnostics) when the input has syntax errors, and
 * when the formatter could not keep the input's meaning (a bug, reported as such).
 */
export function format(text: string, file: string): FormatResult {
  const parsed = parse(text, file);
  if (hasErrors(parsed.diagnostics)) return { diagnostics: [...parsed.diagnostics] };
  let output: string;
  try {
    output = new Printer(text, parsed.comments).print(parsed.document);
  } catch (error) {
    return { diagnostics: [internalError(file, error instanceof Error ? error.message : String(error))] };
  }
  const again = parse(output, file);
  if (hasErrors(again.diagnostics)) return { diagnostics: [internalError(file, "the formatted text does not parse")] };
  if (!sameAst(parsed.document, again.document)) return { diagnostics: [internalError(file, "the formatted text has a different syntax tree")] };
  const before = parsed.comments.map(commentText);
  const after = again.comments.map(commentText);
  if (before.length !== after.length || before.some((c, i) => c !== after[i])) {
    return { diagnostics: [internalError(file, "the formatted text lost or changed a comment")] };
  }
  return { output };
}

function internalError(file: string, detail: string): Diagnostic {
  const at = { line: 1, column: 1, offset: 0 };
  return {
    code: "format-internal-error",
    severity: "error",
    message: `arl fmt could not format this file without changing it (${detail}); the file was left as it is`,
    file,
    range: { start: at, end: at },
    hint: "this is a bug in arl fmt, not in your spec; please report it with this file",
  };
}

/** A comment's text as the formatter prints it: line ends normalized, trailing blanks removed. */
export function commentText(token: IToken): string {
  return token.image
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((l) => l.replace(/[ \t]+$/, ""))
    .join("\n");
}

// --- syntax-tree comparison ------------------------------------------------------------------

/** Whether two syntax trees are equal, ignoring `range` fields. Iterative: trees can be deep. */
export function sameAst(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (x === y) continue;
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) {
      if (typeof x === "number" && typeof y === "number" && Number.isNaN(x) && Number.isNaN(y)) continue;
      return false;
    }
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    const kx = Object.keys(x).filter((k) => k !== "range" && (x as Record<string, unknown>)[k] !== undefined);
    const ky = Object.keys(y).filter((k) => k !== "range" && (y as Record<string, unknown>)[k] !== undefined);
    if (kx.length !== ky.length) return false;
    for (const k of kx) {
      if (!Object.prototype.hasOwnProperty.call(y, k)) return false;
      stack.push([(x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k]]);
    }
  }
  return true;
}

/** A copy of a syntax tree without `range` fields (for test diffs). Iterative. */
export function stripRanges<T>(node: T): unknown {
  const root: { value?: unknown } = {};
  const stack: [unknown, Record<string, unknown> | unknown[], string | number][] = [[node, root as Record<string, unknown>, "value"]];
  while (stack.length > 0) {
    const [src, parent, key] = stack.pop()!;
    let copy: unknown = src;
    if (Array.isArray(src)) {
      const arr: unknown[] = new Array(src.length);
      src.forEach((v, i) => stack.push([v, arr, i]));
      copy = arr;
    } else if (typeof src === "object" && src !== null) {
      const obj: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(src)) if (k !== "range" && v !== undefined) stack.push([v, obj, k]);
      copy = obj;
    }
    (parent as Record<string | number, unknown>)[key] = copy;
  }
  return root.value;
}

// --- the layout language ----------------------------------------------------------------------
// A small Wadler-style document: a group is printed flat (its lines as their flat text) when
// it fits on the rest of the line, otherwise broken (its lines as newlines). `hard` marks a
// document that can never be flat; it propagates to every enclosing group at construction.

type Doc = string | DocNode;
type DocNode =
  | { readonly kind: "concat"; readonly parts: readonly Doc[]; readonly hard: boolean }
  | { readonly kind: "indent"; readonly contents: Doc; readonly hard: boolean }
  | { readonly kind: "group"; readonly contents: Doc; readonly hard: boolean }
  /** A place for a line break: `flat` when its group is flat; `literal` breaks without indenting. */
  | { readonly kind: "line"; readonly flat: string; readonly hard: boolean; readonly literal: boolean }
  | { readonly kind: "ifBreak"; readonly broken: string; readonly flat: string; readonly hard: false }
  /** Comment text: printed, but not counted when deciding whether a group fits. */
  | { readonly kind: "trail"; readonly text: string; readonly hard: false };

const isHard = (d: Doc): boolean => typeof d !== "string" && d.hard;
const concat = (parts: readonly Doc[]): Doc => ({ kind: "concat", parts, hard: parts.some(isHard) });
const indent = (contents: Doc): Doc => ({ kind: "indent", contents, hard: isHard(contents) });
const group = (contents: Doc, forceBreak = false): Doc => ({ kind: "group", contents, hard: forceBreak || isHard(contents) });
const line: Doc = { kind: "line", flat: " ", hard: false, literal: false };
const softline: Doc = { kind: "line", flat: "", hard: false, literal: false };
const hardline: Doc = { kind: "line", flat: "", hard: true, literal: false };
const literalline: Doc = { kind: "line", flat: "", hard: true, literal: true };
const ifBreak = (broken: string, flat = ""): Doc => ({ kind: "ifBreak", broken, flat, hard: false });
const trail = (text: string): Doc => ({ kind: "trail", text, hard: false });

const FLAT = 0;
const BREAK = 1;
type Command = [indentation: number, mode: number, doc: Doc];

function render(doc: Doc): string {
  const out: string[] = [];
  let column = 0;
  let pendingIndent = -1; // indentation owed to the current line, written with its first text
  const emit = (s: string) => {
    if (s === "") return;
    if (pendingIndent >= 0) {
      out.push(" ".repeat(pendingIndent));
      pendingIndent = -1;
    }
    out.push(s);
    column += s.length;
  };
  const stack: Command[] = [[0, BREAK, doc]];
  while (stack.length > 0) {
    const [ind, mode, d] = stack.pop()!;
    if (typeof d === "string") {
      emit(d);
      continue;
    }
    switch (d.kind) {
      case "concat":
        for (let i = d.parts.length - 1; i >= 0; i--) stack.push([ind, mode, d.parts[i]!]);
        break;
      case "indent":
        stack.push([ind + INDENT, mode, d.contents]);
        break;
      case "group": {
        const flat = mode === FLAT || (!d.hard && fits([ind, FLAT, d.contents], stack, LINE_WIDTH - column));
        stack.push([ind, flat ? FLAT : BREAK, d.contents]);
        break;
      }
      case "line":
        if (mode === FLAT && !d.hard) emit(d.flat);
        else {
          out.push("\n");
          pendingIndent = d.literal ? 0 : ind;
          column = pendingIndent;
        }
        break;
      case "ifBreak":
        emit(mode === BREAK ? d.broken : d.flat);
        break;
      case "trail":
        emit(d.text);
        break;
    }
  }
  return out.join("");
}

/** Whether `next` fits in `width` columns, with what follows it up to the next line break. */
function fits(next: Command, rest: readonly Command[], width: number): boolean {
  const cmds: Command[] = [next];
  let restIndex = rest.length;
  while (width >= 0) {
    let cmd = cmds.pop();
    if (cmd === undefined) {
      if (restIndex === 0) return true;
      cmd = rest[--restIndex]!;
    }
    const [ind, mode, d] = cmd;
    if (typeof d === "string") {
      width -= d.length;
      continue;
    }
    switch (d.kind) {
      case "concat":
        for (let i = d.parts.length - 1; i >= 0; i--) cmds.push([ind, mode, d.parts[i]!]);
        break;
      case "indent":
        cmds.push([ind + INDENT, mode, d.contents]);
        break;
      case "group":
        cmds.push([ind, d.hard ? BREAK : mode, d.contents]);
        break;
      case "line":
        if (mode === BREAK || d.hard) return true;
        width -= d.flat.length;
        break;
      case "ifBreak":
        width -= (mode === BREAK ? d.broken : d.flat).length;
        break;
      case "trail":
        break;
    }
  }
  return false;
}

// --- strings ---------------------------------------------------------------------------------

const hex4 = (code: number) => `\\u${code.toString(16).toUpperCase().padStart(4, "0")}`;

/**
 * Characters written as escapes in every string: control characters, invisible separators and
 * lone surrogates; and every whitespace character other than space, tab and newline (so that a
 * `"""` string's lines are blank exactly when they are empty, as dedent sees them).
 */
function escapeChar(ch: string, code: number): string | undefined {
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0xfeff || code === 0x2028 || code === 0x2029) {
    if (ch === "\n") return "\\n";
    if (ch === "\t") return "\\t";
    if (ch === "\r") return "\\r";
    if (ch === "\0") return "\\0";
    return hex4(code);
  }
  if (ch !== " " && /\s/.test(ch)) return hex4(code);
  return undefined;
}

/** Escapes a string's characters for `"..."`, or for `"""` text (newlines and tabs stay). */
function escapeText(value: string, triple: boolean): string {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    const code = value.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      const low = value.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        out += value.slice(i, i + 2);
        i++;
      } else out += hex4(code);
      continue;
    }
    if (code >= 0xdc00 && code <= 0xdfff) {
      out += hex4(code);
      continue;
    }
    if (ch === "\\") out += "\\\\";
    else if (ch === '"') {
      if (!triple) out += '\\"';
      else {
        // In `"""` text only a run of three quotes would end the string; shorter runs stay literal.
        let run = 1;
        while (value[i + run] === '"') run++;
        out += (run >= 3 ? '\\"' : '"').repeat(run);
        i += run - 1;
      }
    } else if (triple && (ch === "\n" || ch === "\t")) out += ch;
    else out += escapeChar(ch, code) ?? ch;
  }
  return out;
}

export function quoteString(value: string): string {
  return `"${escapeText(value, false)}"`;
}

const spaceEscape = (ch: string) => (ch === "\t" ? "\\t" : "\\u0020");

/** The lines of a `"""` string's text, escaped so that the lexer's dedent gives `value` back. */
function tripleLines(value: string): string[] {
  const lines = escapeText(value, true)
    .split("\n")
    // A line's trailing blanks would be invisible (and stripped by editors): escape the last one.
    .map((l) => (/[ \t]$/.test(l) ? l.slice(0, -1) + spaceEscape(l[l.length - 1]!) : l));
  // Dedent removes the indentation common to all non-blank lines: if every line of the value
  // is itself indented, escape the first blank so that only the printer's indentation goes.
  const nonBlank = lines.filter((l) => l !== "");
  if (nonBlank.length > 0 && nonBlank.every((l) => /^[ \t]/.test(l))) {
    const i = lines.findIndex((l) => l !== "");
    lines[i] = spaceEscape(lines[i]![0]!) + lines[i]!.slice(1);
  }
  return lines;
}

function printString(s: ast.StringLiteral): Doc {
  if (!s.multiline) return quoteString(s.value);
  if (s.value === "") return '""""""';
  const body = tripleLines(s.value).flatMap((l): Doc[] => [hardline, l]);
  return concat(['"""', indent(concat(body)), hardline, '"""']);
}

// --- the printer -----------------------------------------------------------------------------

interface Comment {
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

class FormatError extends Error {}

/** The last index in [0, length) where `before` holds, for a `before` true on a prefix; or -1. */
function lastIndex(length: number, before: (i: number) => boolean): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

const isDocElement = (e: { kind: "comment"; c: Comment } | { kind: "span" }): boolean => e.kind === "comment" && e.c.isDoc;

function span(node: ast.Node): Span {
  // An unnamed argument's range includes the parentheses around it, which the printer may drop:
  // its span is its value's, as for list items, so comments there are placed the same way.
  const r = node.kind === "Argument" && !node.name ? node.value.range : node.range;
  return { node, start: r.start.offset, end: r.end.offset };
}

class Printer {
  private readonly comments: Comment[];
  private readonly commentEnds = new Map<number, number>();
  /** Comments between spans: on their own lines before a span, after it on its line, or last. */
  private readonly leading = new Map<object, Comment[]>();
  private readonly trailing = new Map<object, Comment[]>();
  private readonly dangling = new Map<object, Comment[]>();
  /** Comments inside a span, printed before the token that followed them. */
  private readonly anchored = new Map<object, Comment[]>();
  /** Comments before the `{` of a block or the `(` of a call's arguments. */
  private readonly beforeOpen = new Map<object, Comment[]>();

  constructor(
    private readonly text: string,
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

  print(document: ast.Document): string {
    const spans = [...document.imports, ...document.blocks].map(span);
    this.distribute({ key: document, open: 0, close: this.text.length, spans }, this.comments);
    const out = render(this.printDocument(document));
    return out
      .split("\n")
      .map((l) => l.replace(/[ \t]+$/, ""))
      .join("\n");
  }

  // --- comment placement ------------------------------------------------------------------

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
      const idx = lastIndex(spans.length, (i) => spans[i]!.start <= c.start);
      const prev = idx >= 0 ? spans[idx]! : undefined;
      if (prev && c.start < prev.end) inside[idx]!.push(c);
      else if (prev && !this.hasLineBreak(prev.end, c.start)) this.push(this.trailing, prev.node, c);
      else if (idx + 1 < spans.length) this.push(this.leading, spans[idx + 1]!.node, c);
      else this.push(this.dangling, container.key, c);
    }
    spans.forEach((s, i) => this.distributeInside(s, inside[i]!));
  }

  /** Comments inside one span: into nested containers, or before the next token of the span. */
  private distributeInside(s: Span, comments: readonly Comment[]): void {
    if (comments.length === 0) return;
    const anchors: { offset: number; map: Map<object, Comment[]>; key: object }[] = [];
    const containers: Container[] = [];
    const anchor = (node: ast.Node, map = this.anchored) => anchors.push({ offset: node.range.start.offset, map, key: node });
    const work: ast.Node[] = [s.node as ast.Node];
    while (work.length > 0) {
      const n = work.pop()!;
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
          containers.push({ key: n, open: n.range.start.offset + 1, close: n.range.end.offset - 1, spans: n.items.map(span) });
          break;
        case "Record":
          anchor(n);
          containers.push({ key: n, open: n.range.start.offset + 1, close: n.range.end.offset - 1, spans: n.entries.map(span) });
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
      const k = lastIndex(containers.length, (i) => containers[i]!.open <= c.start);
      if (k >= 0 && c.end <= containers[k]!.close) {
        nested[k]!.push(c);
        continue;
      }
      const a = anchors[lastIndex(anchors.length, (i) => anchors[i]!.offset < c.end) + 1];
      if (a) this.push(a.map, a.key, c);
      else this.push(this.trailing, s.node, c);
    }
    containers.forEach((k, i) => this.distribute(k, nested[i]!));
  }

  /** The offset of the first character at or after `from` that is not blank or a comment. */
  private skipTrivia(from: number, parens: boolean): number {
    let p = from;
    while (p < this.text.length) {
      const end = this.commentEnds.get(p);
      if (end !== undefined) p = end;
      else if (/\s/.test(this.text[p]!) || (parens && this.text[p] === ")")) p++;
      else return p;
    }
    throw new FormatError("expected a bracket after a header");
  }

  private hasCommentIn(from: number, to: number): boolean {
    const c = this.comments[lastIndex(this.comments.length, (i) => this.comments[i]!.start < from) + 1];
    return c !== undefined && c.start < to;
  }

  /** Whether the source has a blank line between two offsets. */
  private blankBetween(from: number, to: number): boolean {
    const segments = this.text.slice(from, to).split(/\r\n|\r|\n/);
    for (let i = 1; i < segments.length - 1; i++) if (segments[i]!.trim() === "") return true;
    return false;
  }

  private commentDoc(c: Comment): Doc {
    if (!c.text.includes("\n")) return trail(c.text);
    const lines = c.text.split("\n");
    return concat(lines.flatMap((l, i): Doc[] => (i === 0 ? [trail(l)] : [literalline, trail(l)])));
  }

  /**
   * `doc` preceded by the comments anchored to `key`, each followed by a space or, after a line
   * comment, a new line (indented as a continuation unless `indentBreak` is false).
   */
  private withComments(map: Map<object, Comment[]>, key: object, doc: Doc, options: { spaceBefore?: boolean; indentBreak?: boolean } = {}): Doc {
    const list = map.get(key);
    if (!list) return doc;
    const parts: Doc[] = options.spaceBefore ? [" "] : [];
    const newline = options.indentBreak === false ? hardline : indent(hardline);
    for (const c of list) parts.push(this.commentDoc(c), c.isLine ? newline : " ");
    parts.push(doc);
    return concat(parts);
  }

  private anchor(node: ast.Node, doc: Doc): Doc {
    return this.withComments(this.anchored, node, doc);
  }

  // --- sequences of spans ---------------------------------------------------------------------

  /**
   * The inside of a container: its spans with their comments, separated per `style`.
   * `body`: entries, separated by ", " when flat and by new lines when broken.
   * `list`: items, each followed by "," (the last only when broken).
   * `document`: top-level imports and blocks, one blank line before the first block and between blocks.
   */
  private sequence(key: object, spans: readonly { node: ast.Node; doc: Doc }[], style: "body" | "list" | "document"): Doc[] {
    type Element = { kind: "comment"; c: Comment; role: "leading" | "trailing" | "dangling" } | { kind: "span"; index: number };
    const elements: Element[] = [];
    spans.forEach((s, index) => {
      for (const c of this.leading.get(s.node) ?? []) elements.push({ kind: "comment", c, role: "leading" });
      elements.push({ kind: "span", index });
      const trailing = [...(this.trailing.get(s.node) ?? [])].sort((a, b) => a.start - b.start);
      for (const c of trailing) elements.push({ kind: "comment", c, role: "trailing" });
    });
    for (const c of this.dangling.get(key) ?? []) elements.push({ kind: "comment", c, role: "dangling" });

    const startOf = (e: Element) => (e.kind === "comment" ? e.c.start : spans[e.index]!.node.range.start.offset);
    const startAt = (i: number) => startOf(elements[i]!);
    const endOf = (e: Element) => (e.kind === "comment" ? e.c.end : spans[e.index]!.node.range.end.offset);
    // The span a leading comment belongs to is the next span.
    const spanAfter = (i: number) => {
      for (let j = i; j < elements.length; j++) {
        const f = elements[j]!;
        if (f.kind === "span") return spans[f.index]!.node;
      }
      return undefined;
    };
    const commaBefore = style === "list" ? new Set<number>() : this.docSeparators(elements, startAt);
    const parts: Doc[] = [];
    // Whether the output is still on the last line of the previous span: trailing comments go
    // there, until a line comment (or one spanning lines) ends it.
    let onSpanLine = false;
    for (let i = 0; i < elements.length; i++) {
      const e = elements[i]!;
      const prev = elements[i - 1];
      if (commaBefore.has(i)) {
        if (style === "document" || !elements.slice(0, i).some((f) => f.kind === "span")) {
          throw new FormatError("cannot keep a doc comment apart from the entry after it");
        }
        parts.push(hardline, ",");
      }
      if (prev !== undefined) {
        if (e.kind === "comment" && e.role === "trailing" && onSpanLine) parts.push(" ");
        else {
          if (prev.kind === "span" && e.kind === "span") parts.push(style === "body" ? concat([ifBreak("", ","), line]) : style === "list" ? line : hardline);
          else parts.push(style === "list" ? line : hardline);
          // At the top level, a block (with the comments above it) follows exactly one blank line.
          const startsGroup = (e.kind === "span" || e.role === "leading") && !(prev.kind === "comment" && prev.role === "leading");
          const forced = style === "document" && startsGroup && spanAfter(i)?.kind === "Block";
          if (forced || this.blankBetween(endOf(prev), startOf(e))) parts.push(style === "document" ? hardline : softline);
        }
      }
      if (e.kind === "span") {
        parts.push(spans[e.index]!.doc);
        if (style === "list") parts.push(e.index === spans.length - 1 ? ifBreak(",") : ",");
        onSpanLine = true;
      } else {
        parts.push(this.commentDoc(e.c));
        if (e.c.isLine || e.c.text.includes("\n") || e.role !== "trailing") onSpanLine = false;
      }
    }
    return parts;
  }

  /**
   * Where a comma must separate doc comments from the entry after them. A run of `///` lines
   * documents the entry that starts right after it; the output puts comments that the source
   * kept apart with a token (a comma, a closing parenthesis) next to each other. Runs that
   * document nothing may merge harmlessly; but the run right before an entry must be exactly the
   * one that documented it in the source, so a comma (the one token allowed between entries)
   * goes where that run starts, or right before the entry if it had no documentation.
   */
  private docSeparators(elements: readonly ({ kind: "comment"; c: Comment } | { kind: "span" })[], startOf: (i: number) => number): Set<number> {
    const commas = new Set<number>();
    elements.forEach((e, i) => {
      if (e.kind !== "span") return;
      let first = i; // the first of the doc comments printed right before the entry
      while (first > 0 && isDocElement(elements[first - 1]!)) first--;
      let own = i; // the first of those that were right before it in the source too
      while (own > first && /^\s*$/.test(this.text.slice((elements[own - 1] as { c: Comment }).c.end, startOf(own)))) own--;
      if (own > first) commas.add(own);
    });
    return commas;
  }

  // --- declarations -----------------------------------------------------------------------------

  private printDocument(d: ast.Document): Doc {
    const spans = [...d.imports.map((i) => ({ node: i, doc: this.printImport(i) })), ...d.blocks.map((b) => ({ node: b, doc: this.printBlock(b) }))];
    const parts = this.sequence(d, spans, "document");
    return parts.length === 0 ? "" : concat([...parts, hardline]);
  }

  private printImport(i: ast.ImportDecl): Doc {
    const parts: Doc[] = ["import ", this.anchor(i.path, printString(i.path))];
    if (i.alias) parts.push(" as ", this.anchor(i.alias, i.alias.name));
    return concat(parts);
  }

  private printBlock(b: ast.Block): Doc {
    const parts: Doc[] = [this.anchor(b.type, b.type.name)];
    if (b.name) parts.push(" ", this.anchor(b.name, b.name.name));
    if (b.extends) {
      parts.push(" extends ");
      b.extends.parts.forEach((p, i) => parts.push(i > 0 ? "." : "", this.anchor(p, p.name)));
    }
    parts.push(" ", this.withComments(this.beforeOpen, b, this.printBraces(b, b.entries), { indentBreak: false }));
    return concat(parts);
  }

  /** `{ entries }` of a block or record. */
  private printBraces(owner: ast.Block | ast.RecordExpression, entries: readonly ast.Entry[]): Doc {
    if (entries.length === 0 && !this.dangling.has(owner)) return "{}";
    const { start, end } = owner.range;
    const inner = this.sequence(
      owner,
      entries.map((e) => ({ node: e, doc: e.kind === "Field" ? this.printField(e) : this.printBlock(e) })),
      "body",
    );
    const multiLine = start.line !== end.line || this.hasCommentIn(start.offset, end.offset);
    return group(concat(["{", indent(concat([line, ...inner])), line, "}"]), multiLine);
  }

  private printField(f: ast.Field): Doc {
    const parts: Doc[] = [];
    f.path.forEach((k, i) => {
      // A key ending in a digit-led segment (`below-2x`) would lex as one number with a `.` right
      // after it (`2x.b`): a space keeps the dot apart.
      const prev = f.path[i - 1];
      const dot = prev && !prev.quoted && /(^|-)\d[^-]*$/.test(prev.name) ? " ." : ".";
      parts.push(i > 0 ? dot : "", this.anchor(k, k.quoted ? quoteString(k.name) : k.name));
    });
    parts.push(": ", this.printExpression(f.value));
    return concat(parts);
  }

  /** `[items]` or `(args)`: flat when it fits, else one per line with trailing commas. */
  private printBracketed(owner: object, open: string, close: string, items: readonly { node: ast.Node; doc: Doc }[], forceBreak: boolean): Doc {
    if (items.length === 0 && !this.dangling.has(owner)) return open + close;
    const inner = this.sequence(owner, items, "list");
    return group(concat([open, indent(concat([softline, ...inner])), softline, close]), forceBreak);
  }

  // --- expressions ------------------------------------------------------------------------------

  private printExpression(e: ast.Expression): Doc {
    switch (e.kind) {
      case "Number":
        return this.anchor(e, e.raw);
      case "String":
        return this.anchor(e, printString(e));
      case "Boolean":
        return this.anchor(e, e.value ? "true" : "false");
      case "None":
        return this.anchor(e, "none");
      case "Identifier":
        return this.anchor(e, e.name);
      case "List": {
        const { start, end } = e.range;
        const items = e.items.map((item) => ({ node: item, doc: this.printExpression(item) }));
        return this.anchor(e, this.printBracketed(e, "[", "]", items, this.hasCommentIn(start.offset, end.offset)));
      }
      case "Record":
        return this.anchor(e, this.printBraces(e, e.entries));
      case "Unary":
        return this.printUnary(e);
      case "Binary":
        return this.printBinary(e);
      case "When":
        return this.printWhen(e);
      case "Member":
      case "Call":
        return this.printPostfix(e);
      case "Invalid":
        throw new FormatError("the syntax tree has an invalid expression");
    }
  }

  private operand(e: ast.Expression, parens: boolean): Doc {
    const doc = this.printExpression(e);
    return parens ? concat(["(", doc, ")"]) : doc;
  }

  /** A run of prefix operators, printed in a loop (the parser accepts very long runs). */
  private printUnary(e: ast.UnaryExpression): Doc {
    const parts: Doc[] = [];
    let cur: ast.Expression = e;
    for (;;) {
      const u = cur as ast.UnaryExpression;
      parts.push(this.anchor(u, u.operator === "not" ? "not " : u.operator));
      cur = u.operand;
      const floor = u.operator === "not" ? precedence.not : precedence.unary;
      if (cur.kind === "Unary" && expressionPrecedence(cur) >= floor) continue;
      parts.push(this.operand(cur, expressionPrecedence(cur) < floor));
      return concat(parts);
    }
  }

  /** A left-leaning chain of one precedence level, printed in a loop (chains can be long). */
  private printBinary(e: ast.BinaryExpression): Doc {
    const level = expressionPrecedence(e);
    const chainable = level !== precedence.comparison; // comparisons do not associate
    const rights: ast.BinaryExpression[] = [];
    let first: ast.Expression = e;
    while (first.kind === "Binary" && expressionPrecedence(first) === level && (rights.length === 0 || chainable)) {
      rights.push(first);
      first = first.left;
    }
    const parts: Doc[] = [this.operand(first, expressionPrecedence(first) < level || (!chainable && expressionPrecedence(first) <= level))];
    for (let i = rights.length - 1; i >= 0; i--) {
      const b = rights[i]!;
      parts.push(` ${b.operator} `, this.operand(b.right, expressionPrecedence(b.right) <= level));
    }
    return concat(parts);
  }

  private printWhen(e: ast.WhenExpression): Doc {
    const conditions: ast.Expression[] = [];
    let first: ast.Expression = e;
    while (first.kind === "When") {
      conditions.push(first.condition);
      first = first.value;
    }
    const parts: Doc[] = [this.printExpression(first)];
    for (let i = conditions.length - 1; i >= 0; i--) {
      const c = conditions[i]!;
      parts.push(" when ", this.operand(c, expressionPrecedence(c) <= precedence.when));
    }
    return concat(parts);
  }

  /** `a.b(c).d`: a chain of member accesses and calls, printed in a loop. */
  private printPostfix(e: ast.MemberExpression | ast.CallExpression): Doc {
    const suffixes: (ast.MemberExpression | ast.CallExpression)[] = [];
    let base: ast.Expression = e;
    while (base.kind === "Member" || base.kind === "Call") {
      suffixes.push(base);
      base = base.kind === "Member" ? base.object : base.callee;
    }
    // `1.x` would lex as one malformed number: a number before `.` keeps its parentheses.
    const numberBeforeDot = base.kind === "Number" && suffixes[suffixes.length - 1]!.kind === "Member";
    const parts: Doc[] = [this.operand(base, expressionPrecedence(base) < precedence.postfix || numberBeforeDot)];
    for (let i = suffixes.length - 1; i >= 0; i--) {
      const s = suffixes[i]!;
      if (s.kind === "Member") parts.push(".", this.anchor(s.property, s.property.name));
      else {
        const args = s.args.map((a) => ({ node: a, doc: this.printArgument(a) }));
        const paren = this.skipTrivia(s.callee.range.end.offset, true);
        const forceBreak = this.hasCommentIn(paren, s.range.end.offset);
        parts.push(this.withComments(this.beforeOpen, s, this.printBracketed(s, "(", ")", args, forceBreak), { spaceBefore: true }));
      }
    }
    return concat(parts);
  }

  private printArgument(a: ast.Argument): Doc {
    const value = this.printExpression(a.value);
    return a.name ? concat([this.anchor(a.name, a.name.name), ": ", value]) : value;
  }
}
