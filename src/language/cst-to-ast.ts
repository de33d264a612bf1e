// CST -> AST. The CST may be partial where the parser recovered from errors; every missing
// piece becomes an `Invalid` node (already reported) rather than an exception.
import type { CstElement, CstNode, IToken } from "chevrotain";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type * as ast from "./ast.js";
import { tokenEndOffset } from "./lexer.js";
import type { LineIndex, Range } from "./source.js";
import * as t from "./tokens.js";

type Children = Record<string, CstElement[] | undefined>;

function isToken(e: CstElement): e is IToken {
  return (e as IToken).tokenType !== undefined;
}

function nodes(children: Children, key: string): CstNode[] {
  return (children[key] ?? []).filter((e): e is CstNode => !isToken(e));
}

function tokens(children: Children, key: string): IToken[] {
  return (children[key] ?? []).filter(isToken).filter((tok) => !isInserted(tok));
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
}

export function buildAst(cst: CstNode, file: string, lines: LineIndex, comments: readonly IToken[], text: string): AstBuildResult {
  const builder = new AstBuilder(file, lines, comments, text);
  const document = builder.build(cst);
  return { document, diagnostics: builder.diagnostics };
}

class AstBuilder {
  readonly diagnostics: Diagnostic[] = [];
  private readonly docs = new Map<number, string>();

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
    const strays = [...nodes(c, "stray").map((n) => tokens(n.children as Children, "Stray")[0]), ...tokens(c, "strayBrace")];
    for (const tok of strays) if (tok) this.stray(tok, "a block such as 'experiment NAME { ... }'");
    for (const late of nodes(c, "lateImport")) {
      this.misplaced(late, "imports must come before the first block", "move this import to the top of the file");
    }
    for (const field of nodes(c, "topLevelField")) {
      this.misplaced(field, "a field must be inside a block", "top-level declarations are blocks such as 'experiment NAME { ... }'");
    }
    return { kind: "Document", file: this.file, imports, blocks, range: this.range(0, this.text.length) };
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
    const parts = tokens(n.children as Children, "Identifier")
      .sort((a, b) => a.startOffset - b.startOffset)
      .map((tok) => this.identifier(tok));
    if (parts.length === 0) return undefined;
    return { kind: "Reference", parts, range: this.range(parts[0]!.range.start.offset, parts[parts.length - 1]!.range.end.offset) };
  }

  private body(n: CstNode): ast.Entry[] {
    const c = n.children as Children;
    for (const s of nodes(c, "stray")) {
      const first = tokens(s.children as Children, "Stray")[0];
      if (first) this.stray(first, "a field ('name: value'), a block ('name { ... }') or '}'");
    }
    return nodes(c, "entry").flatMap((e) => this.entry(e));
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
    const value = exprNode ? this.expression(exprNode) : this.invalid(this.range(range.end.offset, range.end.offset));
    const doc = this.docAt(range.start.offset);
    return [{ kind: "Field", path, value, ...(doc !== undefined ? { doc } : {}), range }];
  }

  private key(n: CstNode): ast.Key[] {
    const c = n.children as Children;
    const str = tokens(c, "StringToken")[0];
    if (str) {
      const s = this.string(str);
      return [{ kind: "Key", name: s.value, quoted: true, range: s.range }];
    }
    const parts = tokens(c, "Identifier").sort((a, b) => a.startOffset - b.startOffset);
    if (parts.length === 0) return [];
    const start = parts[0]!.startOffset;
    const end = tokenEndOffset(parts[parts.length - 1]!);
    const raw = this.text.slice(start, end);
    if (/\s/.test(raw)) {
      this.diagnostics.push({
        code: "syntax-error",
        severity: "error",
        message: `a kebab-case name is written without spaces: '${raw.replace(/\s+/g, "")}'`,
        file: this.file,
        range: this.range(start, end),
        hint: "remove the spaces around '-'",
      });
    }
    return [{ kind: "Key", name: parts.map((p) => p.image).join("-"), quoted: false, range: this.range(start, end) }];
  }

  // --- expressions ---------------------------------------------------------------------------

  expression(n: CstNode): ast.Expression {
    const c = n.children as Children;
    const operands = nodes(c, "orExpression").map((o) => this.binaryChain(o, "andExpression", t.Or.name));
    if (operands.length === 0) return this.invalid(this.nodeRange(n));
    // `a when b when c` groups to the left: (a when b) when c.
    let result = operands[0]!;
    for (const cond of operands.slice(1)) {
      result = { kind: "When", value: result, condition: cond, range: this.range(result.range.start.offset, cond.range.end.offset) };
    }
    return result;
  }

  /** Left-associative chains: or -> and -> not, additive -> multiplicative -> unary. */
  private binaryChain(n: CstNode, operandRule: string, operatorKey: string): ast.Expression {
    const c = n.children as Children;
    const operands = nodes(c, operandRule).map((o) => this.operand(o, operandRule));
    const operators = tokens(c, operatorKey);
    if (operands.length === 0) return this.invalid(this.nodeRange(n));
    let result = operands[0]!;
    for (let i = 1; i < operands.length; i++) {
      const right = operands[i]!;
      const op = operators[i - 1];
      const range = this.range(result.range.start.offset, right.range.end.offset);
      // An operator lost to error recovery leaves nothing meaningful to build.
      result = op ? { kind: "Binary", operator: op.image as ast.BinaryOperator, left: result, right, range } : this.invalid(range);
    }
    return result;
  }

  private operand(n: CstNode, rule: string): ast.Expression {
    switch (rule) {
      case "andExpression":
        return this.binaryChain(n, "notExpression", t.And.name);
      case "notExpression":
        return this.prefixed(n, t.Not.name, "comparison");
      case "multiplicative":
        return this.binaryChain(n, "unary", "MultiplicativeOp");
      case "unary":
        return this.prefixed(n, "AdditiveOp", "postfix");
      default:
        return this.invalid(this.nodeRange(n));
    }
  }

  private prefixed(n: CstNode, operatorKey: string, operandRule: string): ast.Expression {
    const c = n.children as Children;
    const inner = nodes(c, operandRule)[0];
    let result: ast.Expression = inner
      ? operandRule === "comparison"
        ? this.comparison(inner)
        : this.postfix(inner)
      : this.invalid(this.nodeRange(n));
    const ops = tokens(c, operatorKey);
    for (let i = ops.length - 1; i >= 0; i--) {
      const op = ops[i]!;
      result = { kind: "Unary", operator: op.image as ast.UnaryOperator, operand: result, range: this.range(op.startOffset, result.range.end.offset) };
    }
    return result;
  }

  private comparison(n: CstNode): ast.Expression {
    const c = n.children as Children;
    const sides = nodes(c, "additive").map((a) => this.binaryChain(a, "multiplicative", "AdditiveOp"));
    const op = tokens(c, "ComparisonOp")[0];
    if (sides.length === 0) return this.invalid(this.nodeRange(n));
    const left = sides[0]!;
    const right = sides[1];
    if (!right || !op) return left;
    return { kind: "Binary", operator: op.image as ast.BinaryOperator, left, right, range: this.range(left.range.start.offset, right.range.end.offset) };
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
    return body.replace(/\\(u\{[0-9A-Fa-f]{1,6}\}|u[0-9A-Fa-f]{4}|[\s\S]?)/g, (whole, esc: string, index: number) => {
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
          const hex = esc.startsWith("u{") ? esc.slice(2, -1) : esc.slice(1);
          const cp = Number.parseInt(hex, 16);
          if (cp <= 0x10ffff) return String.fromCodePoint(cp);
          break;
        }
      }
      // The offset of the escape inside the token: exact for "..." strings, approximate after dedent.
      const at = Math.min(tokenEndOffset(tok) - 1, tok.startOffset + image0Offset(tok) + index);
      this.diagnostics.push({
        code: "invalid-escape",
        severity: "error",
        message: `unknown escape sequence '${whole}'`,
        file: this.file,
        range: this.range(at, at + whole.length),
        hint: 'valid escapes are \\n \\t \\r \\0 \\" \\\\ \\uXXXX and \\u{X...}',
      });
      return whole;
    });
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
  let s = raw.replace(/\r\n?/g, "\n");
  if (s.startsWith("\n")) s = s.slice(1);
  s = s.replace(/\n[ \t]*$/, "");
  const lines = s.split("\n");
  let indent = Number.POSITIVE_INFINITY;
  for (const line of lines) {
    if (line.trim() === "") continue;
    indent = Math.min(indent, /^[ \t]*/.exec(line)![0].length);
  }
  if (!Number.isFinite(indent) || indent === 0) return s;
  return lines.map((line) => line.slice(Math.min(indent, /^[ \t]*/.exec(line)![0].length))).join("\n");
}
