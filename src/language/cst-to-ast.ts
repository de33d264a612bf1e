// CST -> AST. The CST may be partial where the parser recovered from errors; every missing
// piece becomes an `Invalid` node (already reported) rather than an exception.
import type { CstElement, CstNode, IToken } from "chevrotain";
import type { LineIndex, Range } from "../contracts/source-range.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type * as ast from "./ast.js";
import { binaryPrecedence, precedence } from "./ast.js";
import { DepthMeter, MAX_EXPRESSION_DEPTH } from "./expression-depth.js";
import { MAX_REPEATED_REPORTS, tokenEndOffset } from "./lexer.js";
import { describeToken } from "./parser.js";
import * as t from "./tokens.js";

type Children = Record<string, CstElement[] | undefined>;

function isToken(e: CstElement): e is IToken {
  return (e as IToken).tokenType !== undefined;
}

const EMPTY: never[] = [];

/** A key of a CST node holds either subrule nodes or tokens, never both. */
function nodes(children: Children, key: string): CstNode[] {
  return (children[key] as CstNode[] | undefined) ?? EMPTY;
}

function tokens(children: Children, key: string): IToken[] {
  const list = children[key] as IToken[] | undefined;
  if (!list) return EMPTY;
  // Copy only in the rare case that recovery inserted a token.
  return list.some(isInserted) ? list.filter((tok) => !isInserted(tok)) : list;
}

/** Tokens invented by single-token-insertion recovery have no real position. */
function isInserted(tok: IToken): boolean {
  return tok.isInsertedInRecovery === true || Number.isNaN(tok.startOffset);
}

function firstOffset(e: CstElement): number {
  if (isToken(e)) return e.startOffset;
  const start = e.location?.startOffset;
  return start === undefined || Number.isNaN(start) ? Number.POSITIVE_INFINITY : start;
}

export interface AstBuildResult {
  readonly document: ast.Document;
  readonly diagnostics: Diagnostic[];
  readonly keySegments: ReadonlySet<number>;
}

export function buildAst(cst: CstNode, file: string, lines: LineIndex, comments: readonly IToken[], text: string): AstBuildResult {
  const builder = new AstBuilder(file, lines, comments, text);
  const document = builder.build(cst);
  return { document, diagnostics: builder.diagnostics, keySegments: builder.keySegments };
}

class AstBuilder {
  readonly diagnostics: Diagnostic[] = [];
  /** Offsets of digit-led key segments (`2x`): not malformed numbers, whatever the lexer said. */
  readonly keySegments = new Set<number>();
  private readonly docs = new Map<number, string>();
  private readonly depth = new DepthMeter();
  /** Where a compound expression's own syntax is (its operator, `(` or bracket), for reports. */
  private readonly anchors = new WeakMap<object, Range>();

  constructor(
    private readonly file: string,
    private readonly lines: LineIndex,
    comments: readonly IToken[],
    private readonly text: string,
  ) {
    this.indexDocComments(comments);
  }

  /** Maps the offset of the first character after each run of `///` lines to the run's text. */
  private indexDocComments(comments: readonly IToken[]): void {
    let run: string[] = [];
    let runEnd = -1;
    const flush = () => {
      if (run.length > 0) {
        let next = runEnd;
        while (next < this.text.length && /\s/.test(this.text[next]!)) next++;
        this.docs.set(next, run.join("\n"));
      }
      run = [];
    };
    for (const c of comments) {
      if (c.tokenType !== t.DocComment) {
        flush();
        continue;
      }
      if (run.length > 0 && !/^\s*$/.test(this.text.slice(runEnd, c.startOffset))) flush();
      run.push(c.image.slice(3).replace(/^ /, "").trimEnd());
      runEnd = tokenEndOffset(c);
    }
    flush();
  }

  private docAt(offset: number): string | undefined {
    return this.docs.get(offset);
  }

  private range(start: number, end: number): Range {
    if (!Number.isFinite(start)) start = Number.isFinite(end) ? end : 0;
    if (!Number.isFinite(end) || end < start) end = start;
    return this.lines.range(start, end);
  }

  private tokenRange(tok: IToken): Range {
    return this.range(tok.startOffset, tokenEndOffset(tok));
  }

  private nodeRange(node: CstNode): Range {
    const loc = node.location;
    if (!loc) return this.range(0, 0);
    return this.range(loc.startOffset, loc.endOffset === undefined ? Number.NaN : loc.endOffset + 1);
  }

  private invalid(range: Range): ast.InvalidExpression {
    return { kind: "Invalid", range };
  }

  build(cst: CstNode): ast.Document {
    const c = cst.children as Children;
    const imports = nodes(c, "importDecl").flatMap((n) => this.importDecl(n));
    const blocks = nodes(c, "block").flatMap((n) => this.block(n));
    const closedEarly = this.misplacedBlocks(blocks, tokens(c, "strayBrace"));
    const strays = [...nodes(c, "stray").map((n) => tokens(n.children as Children, "Stray")[0]), ...tokens(c, "strayBrace").filter((tok) => tok !== closedEarly)];
    for (const tok of strays) if (tok) this.stray(tok, "a block such as 'experiment NAME { ... }'");
    for (const late of nodes(c, "lateImport")) {
      this.misplaced(late, "imports must come before the first block", "move this import to the top of the file");
    }
    for (const field of nodes(c, "topLevelField")) {
      this.misplaced(field, "a field must be inside a block", "top-level declarations are blocks such as 'experiment NAME { ... }'");
    }
    return { kind: "Document", file: this.file, imports, blocks, range: this.range(0, this.text.length) };
  }

  /**
   * Top-level blocks that only make sense inside an experiment (`sweep { ... }`, or an unnamed
   * `rollout { ... }` right after one) are reported. When a `}` is left over at the top level
   * after them, the mistake is a `}` that closed the experiment before them: that one is
   * reported, where it is, and the left-over one (the experiment's own) is returned, not to be
   * reported again.
   */
  private misplacedBlocks(blocks: readonly ast.Block[], strayBraces: readonly IToken[]): IToken | undefined {
    let closedEarly: IToken | undefined;
    for (let i = 1; i < blocks.length; i++) {
      const block = blocks[i]!;
      const kind = block.type.name;
      const experimentOnly = EXPERIMENT_ONLY_BLOCKS.has(kind);
      const before = blocks[i - 1]!;
      const afterExperiment = before.type.name === "experiment" && before.name !== undefined;
      if (!experimentOnly && !(afterExperiment && block.name === undefined)) continue;
      if (experimentOnly) {
        this.diagnostics.push({
          code: "syntax-error",
          severity: "error",
          message: `${/^[aeiou]/.test(kind) ? "an" : "a"} '${kind}' block belongs inside an experiment, not at the top level`,
          file: this.file,
          range: block.type.range,
          hint: "move it into 'experiment NAME { ... }'; if it is inside one already, a '}' above it closes the experiment early",
        });
      }
      const leftOver = strayBraces.find((tok) => tok.startOffset > block.range.end.offset - 1);
      if (!afterExperiment || !leftOver || closedEarly) continue;
      closedEarly = leftOver;
      const close = before.range.end.offset - 1;
      const kinds = [...new Set(blocks.slice(i).filter((b) => EXPERIMENT_ONLY_BLOCKS.has(b.type.name) || b.name === undefined).map((b) => `'${b.type.name}'`))];
      this.diagnostics.push({
        code: "syntax-error",
        severity: "error",
        message: `this '}' closes experiment '${before.name!.name}' early: the ${kinds.join(", ")} block${kinds.length > 1 ? "s" : ""} after it belong${kinds.length > 1 ? "" : "s"} inside it`,
        file: this.file,
        range: this.range(close, close + 1),
        hint: `delete this '}' (the experiment is closed again on line ${this.lines.position(leftOver.startOffset).line})`,
      });
    }
    return closedEarly;
  }

  private identifier(tok: IToken): ast.Identifier {
    return { kind: "Identifier", name: tok.image, range: this.tokenRange(tok) };
  }

  private importDecl(n: CstNode): ast.ImportDecl[] {
    const c = n.children as Children;
    const pathTok = tokens(c, "StringToken")[0];
    if (!pathTok) return [];
    const alias = tokens(c, "alias")[0];
    const range = this.nodeRange(n);
    const doc = this.docAt(range.start.offset);
    return [
      {
        kind: "Import",
        path: this.string(pathTok),
        ...(alias ? { alias: this.identifier(alias) } : {}),
        ...(doc !== undefined ? { doc } : {}),
        range,
      },
    ];
  }

  private block(n: CstNode): ast.Block[] {
    const c = n.children as Children;
    const type = tokens(c, "type")[0];
    if (!type) return [];
    const name = tokens(c, "name")[0];
    const ref = nodes(c, "reference")[0];
    const extendsRef = ref ? this.reference(ref) : undefined;
    const body = nodes(c, "body")[0];
    const range = this.nodeRange(n);
    const doc = this.docAt(range.start.offset);
    return [
      {
        kind: "Block",
        type: this.identifier(type),
        ...(name ? { name: this.identifier(name) } : {}),
        ...(extendsRef ? { extends: extendsRef } : {}),
        entries: body ? this.body(body) : [],
        ...(doc !== undefined ? { doc } : {}),
        range,
      },
    ];
  }

  private reference(n: CstNode): ast.Reference | undefined {
    const parts = tokens(n.children as Children, "Identifier").map((tok) => this.identifier(tok));
    if (parts.length === 0) return undefined;
    return { kind: "Reference", parts, range: this.range(parts[0]!.range.start.offset, parts[parts.length - 1]!.range.end.offset) };
  }

  private body(n: CstNode): ast.Entry[] {
    const c = n.children as Children;
    for (const s of nodes(c, "stray")) {
      const first = tokens(s.children as Children, "Stray")[0];
      if (first) this.stray(first, "a field ('name: value'), a block ('name { ... }') or '}'");
    }
    for (const m of nodes(c, "malformedEntry")) this.malformedEntry(m);
    return nodes(c, "entry").flatMap((e) => this.entry(e));
  }

  /** A name followed by what neither a field nor a block allows (the parser kept its line apart). */
  private malformedEntry(n: CstNode): void {
    const c = n.children as Children;
    const [name, second] = tokens(c, "Identifier");
    if (!name) return;
    const rest = [...(second ? [second] : []), ...tokens(c, "rest")].sort((a, b) => a.startOffset - b.startOffset);
    const next = rest[0];
    const found = next ? `, found ${describeToken(next)}` : "";
    this.syntaxError(name, `expected ':' or '{' after '${name.image}'${found}`, "a field is written 'name: value', a block 'name { ... }'");
  }

  private stray(tok: IToken, expected: string): void {
    const shown = tok.image.length > 24 ? `${tok.image.slice(0, 24)}…` : tok.image;
    this.diagnostics.push({
      code: "syntax-error",
      severity: "error",
      message: `unexpected '${shown}'; expected ${expected}`,
      file: this.file,
      range: this.tokenRange(tok),
      hint: "check the line before for an unfinished value or a missing '}'",
    });
  }

  private misplaced(n: CstNode, message: string, hint: string): void {
    const first = Object.values(n.children as Children)
      .flat()
      .filter((e): e is CstElement => e !== undefined)
      .sort((a, b) => firstOffset(a) - firstOffset(b))[0];
    const start = first ? firstOffset(first) : this.nodeRange(n).start.offset;
    const range = this.nodeRange(n);
    this.diagnostics.push({ code: "syntax-error", severity: "error", message, file: this.file, range: this.range(start, range.end.offset), hint });
  }

  private entry(n: CstNode): ast.Entry[] {
    const c = n.children as Children;
    const field = nodes(c, "field")[0];
    if (field) return this.field(field);
    const block = nodes(c, "block")[0];
    return block ? this.block(block) : [];
  }

  private field(n: CstNode): ast.Field[] {
    const c = n.children as Children;
    const path = nodes(c, "key").flatMap((k) => this.key(k));
    if (path.length === 0) return [];
    const exprNode = nodes(c, "expression")[0];
    const range = this.nodeRange(n);
    const doc = this.docAt(range.start.offset);
    // `a.b.c: v` means `a { b { c: v } }`: every dot is a level of nesting for the passes after.
    if (path.length > MAX_EXPRESSION_DEPTH) {
      this.diagnostics.push({
        code: "expression-too-deep",
        severity: "error",
        message: `a field name has more than ${MAX_EXPRESSION_DEPTH} dotted parts`,
        file: this.file,
        range: path[MAX_EXPRESSION_DEPTH]!.range,
        hint: "write the field inside its blocks, or shorten the name",
      });
      const value = this.invalid(this.range(path[0]!.range.start.offset, range.end.offset));
      this.depth.flat(value);
      return [{ kind: "Field", path: path.slice(0, 1), value, ...(doc !== undefined ? { doc } : {}), range }];
    }
    const value = exprNode ? this.bounded(this.expression(exprNode), path.length - 1) : this.invalid(this.range(range.end.offset, range.end.offset));
    return [{ kind: "Field", path, value, ...(doc !== undefined ? { doc } : {}), range }];
  }

  /**
   * The value itself, or, when it is nested deeper than the bound (less the `levelsAbove` that
   * its field's dotted name adds), an `Invalid` node and a report.
   */
  private bounded(value: ast.Expression, levelsAbove: number): ast.Expression {
    const limit = MAX_EXPRESSION_DEPTH - levelsAbove;
    // Each level of nesting takes at least one character: short values cannot be too deep.
    if (value.range.end.offset - value.range.start.offset <= limit) return value;
    const overflow = this.depth.overflow(value, limit);
    if (!overflow) return value;
    const node = overflow.node;
    const start = node.range.start.offset;
    const at =
      this.anchors.get(node) ??
      (node.kind === "Block" ? node.type.range : node.kind === "Member" ? node.property.range : this.range(start, start + (node.kind === "Unary" ? node.operator.length : 1)));
    this.diagnostics.push({
      code: "expression-too-deep",
      severity: "error",
      message: `expression is nested more than ${MAX_EXPRESSION_DEPTH} levels deep here`,
      file: this.file,
      range: at,
      hint: "each operator of a chain, each prefix, '.name', call and bracket adds a level: split the value into named parts (e.g. several reward terms) or shorter expressions",
    });
    const replaced = this.invalid(value.range);
    this.depth.flat(replaced);
    return replaced;
  }

  /** Remembers where `node`'s own syntax is, for the depth report. */
  anchor<T extends ast.Expression>(node: T, tok: IToken): T {
    this.anchors.set(node, this.tokenRange(tok));
    return node;
  }

  private key(n: CstNode): ast.Key[] {
    const c = n.children as Children;
    const str = tokens(c, "StringToken")[0];
    if (str) {
      const s = this.string(str);
      return [{ kind: "Key", name: s.value, quoted: true, range: s.range }];
    }
    const parts = [...tokens(c, "Identifier"), ...tokens(c, "segment")].sort((a, b) => a.startOffset - b.startOffset);
    if (parts.length === 0) return [];
    for (const p of tokens(c, "segment")) this.keySegments.add(p.startOffset);
    const start = parts[0]!.startOffset;
    const end = tokenEndOffset(parts[parts.length - 1]!);
    // Every piece (names and the '-' between them) must touch the next: no spaces, no comments.
    const pieces = [...parts, ...tokens(c, "Minus")].sort((a, b) => a.startOffset - b.startOffset);
    const gap = pieces.some((p, i) => i > 0 && tokenEndOffset(pieces[i - 1]!) !== p.startOffset);
    if (gap) {
      this.diagnostics.push({
        code: "syntax-error",
        severity: "error",
        message: `a kebab-case name is written without spaces: '${pieces.map((p) => p.image).join("")}'`,
        file: this.file,
        range: this.range(start, end),
        hint: "remove the spaces (or comments) around '-'",
      });
    }
    const dotted = tokens(c, "segment").find((p) => !/^[A-Za-z0-9_]+$/.test(p.image));
    if (dotted) {
      this.diagnostics.push({
        code: "syntax-error",
        severity: "error",
        message: `'${dotted.image}' cannot be part of a kebab-case name`,
        file: this.file,
        range: this.tokenRange(dotted),
        hint: "a segment that starts with a digit holds only letters, digits and '_'; quote the key to use other characters",
      });
    }
    return [{ kind: "Key", name: parts.map((p) => p.image).join("-"), quoted: false, range: this.range(start, end) }];
  }

  // --- expressions ---------------------------------------------------------------------------

  /**
   * expression = operand { operator operand }, grouped by precedence climbing: binary
   * operators are left-associative, `not` applies to a whole comparison, and a comparison takes
   * one operator. Recursion depth is bounded by the number of precedence levels.
   */
  expression(n: CstNode): ast.Expression {
    const c = n.children as Children;
    const operands = nodes(c, "operand");
    if (operands.length === 0) return this.invalid(this.nodeRange(n));
    const operators: IToken[] = [];
    // One token at a time: a chain can hold more operators than a call takes arguments.
    for (const key of OPERATOR_KEYS) for (const tok of tokens(c, key)) operators.push(tok);
    operators.sort((a, b) => a.startOffset - b.startOffset);
    // Recovery may leave an operator without its right operand: build what is complete.
    const count = Math.min(operands.length, operators.length + 1);
    return new ExpressionBuilder(this, operands.slice(0, count), operators.slice(0, count - 1)).build();
  }

  /** An operand without its `not` prefixes: signs, then the postfix expression. */
  operandValue(n: CstNode): ast.Expression {
    const c = n.children as Children;
    const inner = nodes(c, "postfix")[0];
    let result: ast.Expression = inner ? this.postfix(inner) : this.invalid(this.nodeRange(n));
    const signs = tokens(c, "AdditiveOp");
    for (let i = signs.length - 1; i >= 0; i--) {
      const op = signs[i]!;
      result = { kind: "Unary", operator: op.image as ast.UnaryOperator, operand: result, range: this.range(op.startOffset, result.range.end.offset) };
    }
    return result;
  }

  notTokens(n: CstNode): IToken[] {
    return tokens(n.children as Children, t.Not.name);
  }

  rangeOf(start: number, end: number): Range {
    return this.range(start, end);
  }

  syntaxError(tok: IToken, message: string, hint: string): void {
    this.diagnostics.push({ code: "syntax-error", severity: "error", message, file: this.file, range: this.tokenRange(tok), hint });
  }

  private postfix(n: CstNode): ast.Expression {
    const c = n.children as Children;
    const primary = nodes(c, "primary")[0];
    let result = primary ? this.primary(primary) : this.invalid(this.nodeRange(n));
    const suffixes: CstElement[] = [...tokens(c, "Identifier"), ...nodes(c, "callArguments")].sort((a, b) => firstOffset(a) - firstOffset(b));
    for (const s of suffixes) {
      if (isToken(s)) {
        const property = this.identifier(s);
        result = { kind: "Member", object: result, property, range: this.range(result.range.start.offset, property.range.end.offset) };
      } else {
        const args = nodes(s.children as Children, "argument").map((a) => this.argument(a));
        const end = this.nodeRange(s).end.offset;
        result = { kind: "Call", callee: result, args, range: this.range(result.range.start.offset, end) };
        const open = tokens(s.children as Children, t.LParen.name)[0];
        if (open) this.anchor(result, open);
      }
    }
    return result;
  }

  private argument(n: CstNode): ast.Argument {
    const c = n.children as Children;
    const name = tokens(c, "name")[0];
    const e = nodes(c, "expression")[0];
    const range = this.nodeRange(n);
    const value = e ? this.expression(e) : this.invalid(range);
    return { kind: "Argument", ...(name ? { name: this.identifier(name) } : {}), value, range };
  }

  private primary(n: CstNode): ast.Expression {
    const c = n.children as Children;
    const range = this.nodeRange(n);
    const num = tokens(c, "NumberToken")[0];
    if (num) return this.number(num);
    const str = tokens(c, "StringToken")[0];
    if (str) return this.string(str);
    if (tokens(c, t.True.name)[0]) return { kind: "Boolean", value: true, range };
    if (tokens(c, t.False.name)[0]) return { kind: "Boolean", value: false, range };
    if (tokens(c, t.None.name)[0]) return { kind: "None", range };
    const id = tokens(c, "Identifier")[0];
    if (id) return this.identifier(id);
    const list = nodes(c, "list")[0];
    if (list) {
      const items = nodes(list.children as Children, "expression").map((e) => this.expression(e));
      return { kind: "List", items, range: this.nodeRange(list) };
    }
    const record = nodes(c, "record")[0];
    if (record) {
      const body = nodes(record.children as Children, "body")[0];
      return { kind: "Record", entries: body ? this.body(body) : [], range: this.nodeRange(record) };
    }
    const paren = nodes(c, "parenthesized")[0];
    if (paren) {
      const e = nodes(paren.children as Children, "expression")[0];
      return e ? this.expression(e) : this.invalid(this.nodeRange(paren));
    }
    return this.invalid(range);
  }

  private number(tok: IToken): ast.Expression {
    const range = this.tokenRange(tok);
    if (tok.tokenType === t.MalformedNumber) return this.invalid(range);
    const value = Number(tok.image.replace(/_/g, ""));
    if (!Number.isFinite(value)) {
      this.diagnostics.push({
        code: "invalid-token",
        severity: "error",
        message: `number ${tok.image} is too large to represent`,
        file: this.file,
        range,
        hint: "numbers must fit a 64-bit float (at most about 1.8e308)",
      });
      return this.invalid(range);
    }
    return { kind: "Number", value, raw: tok.image, range };
  }

  private string(tok: IToken): ast.StringLiteral {
    const range = this.tokenRange(tok);
    const image = tok.image;
    const multiline = tok.tokenType === t.TripleString || tok.tokenType === t.UnterminatedTripleString;
    let body: string;
    if (tok.tokenType === t.TripleString) body = dedent(image.slice(3, -3));
    else if (tok.tokenType === t.UnterminatedTripleString) body = dedent(image.slice(3));
    else if (tok.tokenType === t.UnterminatedString) body = image.slice(1);
    else body = image.slice(1, -1);
    return { kind: "String", value: this.unescape(body, tok), multiline, range };
  }

  private unescape(body: string, tok: IToken): string {
    if (!body.includes("\\")) return body;
    let invalid = 0;
    let firstUnreported = -1;
    const value = body.replace(/\\(u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u\{[0-9A-Fa-f]{1,6}\}|u[0-9A-Fa-f]{4}|[\s\S]?)/g, (whole, esc: string, index: number) => {
      switch (esc[0]) {
        case "n":
          return "\n";
        case "t":
          return "\t";
        case "r":
          return "\r";
        case "0":
          return "\0";
        case '"':
          return '"';
        case "\\":
          return "\\";
        case "u": {
          // A surrogate pair written as two escapes (as in JSON) is one character.
          if (esc.length === 11) return String.fromCharCode(Number.parseInt(esc.slice(1, 5), 16), Number.parseInt(esc.slice(7, 11), 16));
          const hex = esc.startsWith("u{") ? esc.slice(2, -1) : esc.slice(1);
          const cp = Number.parseInt(hex, 16);
          // A lone surrogate is not a character: it cannot be written as UTF-8.
          if (cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff)) return String.fromCodePoint(cp);
          break;
        }
      }
      // The offset of the escape inside the token: exact for "..." strings, approximate after dedent.
      const at = Math.min(tokenEndOffset(tok) - 1, tok.startOffset + image0Offset(tok) + index);
      // A string of thousands of bad escapes (binary pasted in) is one mistake: a few reports and a count.
      if (++invalid > MAX_REPEATED_REPORTS) {
        if (firstUnreported < 0) firstUnreported = at;
        return whole;
      }
      this.diagnostics.push({ code: "invalid-escape", severity: "error", ...escapeProblem(whole), file: this.file, range: this.range(at, at + whole.length) });
      return whole;
    });
    if (firstUnreported >= 0) {
      this.diagnostics.push({
        code: "invalid-escape",
        severity: "error",
        message: `${invalid - MAX_REPEATED_REPORTS} more unknown escape sequences in this string`,
        file: this.file,
        range: this.range(firstUnreported, firstUnreported + 1),
        hint: 'write a backslash as \\\\; valid escapes are \\n \\t \\r \\0 \\" \\\\ \\uXXXX and \\u{X...}',
      });
    }
    return value;
  }
}

function image0Offset(tok: IToken): number {
  return tok.image.startsWith('"""') ? 3 : 1;
}

/**
 * Multi-line text: a line break right after the opening quotes and the whitespace-only line
 * before the closing quotes are dropped, and the indentation common to all non-blank lines
 * is removed, so a prompt can be indented with the code around it.
 */
export function dedent(raw: string): string {
  const all = raw.replace(/\r\n?/g, "\n").split("\n");
  // The line break after the opening quotes, and the closing quotes' own line when it holds
  // only indentation, are layout, not text.
  if (all.length > 1 && all[0] === "") all.shift();
  if (raw.includes("\n") && all.length > 0 && /^[ \t]*$/.test(all[all.length - 1]!)) all.pop();
  const s = all.join("\n");
  const lines = all;
  let indent = Number.POSITIVE_INFINITY;
  for (const line of lines) {
    if (line.trim() === "") continue;
    indent = Math.min(indent, /^[ \t]*/.exec(line)![0].length);
  }
  if (!Number.isFinite(indent) || indent === 0) return s;
  return lines.map((line) => line.slice(Math.min(indent, /^[ \t]*/.exec(line)![0].length))).join("\n");
}

/**
 * Blocks that exist only as part of an experiment (its variants, constraints and `allow` list);
 * every other kind of block is also a top-level declaration (`declarationKinds` in semantics).
 */
const EXPERIMENT_ONLY_BLOCKS: ReadonlySet<string> = new Set(["sweep", "ablation", "constraints", "allow"]);

const OPERATOR_KEYS = [t.When.name, t.Or.name, t.And.name, "ComparisonOp", "AdditiveOp", "MultiplicativeOp"];

/** Precedence climbing over one flat `operand (operator operand)*` sequence. */
class ExpressionBuilder {
  private next = 0;
  /** Operands whose `not` prefixes have already been applied. */
  private readonly notsDone = new Set<number>();

  constructor(
    private readonly b: AstBuilder,
    private readonly operands: readonly CstNode[],
    private readonly operators: readonly IToken[],
  ) {}

  build(): ast.Expression {
    return this.climb(0);
  }

  private climb(minPrecedence: number): ast.Expression {
    let left = this.operand(minPrecedence);
    let comparedAt: IToken | undefined;
    while (this.next <= this.operators.length && this.next >= 1) {
      const op = this.operators[this.next - 1]!;
      const p = binaryPrecedence(op.image as ast.BinaryOperator | "when");
      if (p < minPrecedence) break;
      if (p === precedence.comparison) {
        if (comparedAt) this.b.syntaxError(op, "comparisons cannot be chained", "combine them with 'and': a < b and b < c");
        comparedAt = op;
      }
      const right = this.climb(p + 1);
      const range = this.b.rangeOf(left.range.start.offset, right.range.end.offset);
      left = this.b.anchor(
        op.image === "when"
          ? { kind: "When", value: left, condition: right, range }
          : { kind: "Binary", operator: op.image as ast.BinaryOperator, left, right, range },
        op,
      );
    }
    return left;
  }

  /** The operand at the cursor; `not` prefixes take the whole comparison that follows. */
  private operand(minPrecedence: number): ast.Expression {
    const index = this.next;
    const node = this.operands[index]!;
    const nots = this.notsDone.has(index) ? [] : this.b.notTokens(node);
    if (nots.length > 0) {
      if (minPrecedence > precedence.not) {
        this.b.syntaxError(nots[0]!, "'not' cannot follow this operator without parentheses", "write the negation in parentheses: a == (not b)");
      }
      this.notsDone.add(index);
      let result = this.climb(precedence.comparison);
      for (let i = nots.length - 1; i >= 0; i--) {
        const tok = nots[i]!;
        result = { kind: "Unary", operator: "not", operand: result, range: this.b.rangeOf(tok.startOffset, result.range.end.offset) };
      }
      return result;
    }
    this.next = index + 1;
    return this.b.operandValue(node);
  }
}

/** What is wrong with an escape the string decoder refused, and how to write it instead. */
function escapeProblem(escape: string): { message: string; hint: string } {
  const valid = 'valid escapes are \\n \\t \\r \\0 \\" \\\\ \\uXXXX and \\u{X...}';
  const code = /^\\u\{?([0-9A-Fa-f]+)\}?$/.exec(escape);
  if (!code) return { message: `unknown escape sequence '${escape}'`, hint: valid };
  const cp = Number.parseInt(code[1]!, 16);
  if (cp >= 0xd800 && cp <= 0xdfff) {
    return { message: `'${escape}' is a lone surrogate, not a character (no UTF-8 text can hold it)`, hint: "write the character itself, or a high and low surrogate pair as two escapes (\\uD83D\\uDE00)" };
  }
  return { message: `'${escape}' is past U+10FFFF, the last Unicode code point`, hint: valid };
}
