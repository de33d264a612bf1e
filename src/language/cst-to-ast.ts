// CST -> AST for declarations (imports, blocks, fields, keys), over the expression builder in
// cst-expressions.ts. The CST may be partial where the parser recovered from errors; every missing
// piece becomes an `Invalid` node (already reported) rather than an exception.
import type { CstElement, CstNode, IToken } from "chevrotain";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type * as ast from "./ast.js";
import { type Children, firstOffset, nodes, tokens } from "./cst-children.js";
import { at, last } from "../contracts/checked.js";
import { ExpressionAstBuilder } from "./cst-expressions.js";
import { indexDocComments } from "./doc-comments.js";
import { DepthMeter, MAX_EXPRESSION_DEPTH } from "./expression-depth.js";
import { tokenEndOffset } from "./lexer.js";
import { describeToken } from "./parser.js";
import type { LineIndex } from "../contracts/source-range.js";

export interface AstBuildResult {
  readonly document: ast.Document;
  readonly diagnostics: Diagnostic[];
  readonly keySegments: ReadonlySet<number>;
}

/**
 * Builds one document's AST; `blockParsed` may be handed each top-level block while the parser
 * is still running, and `finish` does the rest with the document's node. A block taken early
 * has its CST children dropped once converted, so that the garbage collector can free them.
 */
export class DocumentAstBuilder {
  private readonly builder: AstBuilder;
  private readonly early = new Map<CstNode, ast.Block[]>();

  constructor(file: string, lines: LineIndex, docComments: readonly IToken[], text: string) {
    this.builder = new AstBuilder(file, lines, docComments, text, this.early);
  }

  blockParsed(n: CstNode): void {
    this.early.set(n, this.builder.topLevelBlock(n));
    // The node stays in the document's children (finish looks it up); its subtree goes.
    (n as { children: CstNode["children"] }).children = {};
  }

  finish(cst: CstNode): AstBuildResult {
    const document = this.builder.build(cst);
    return { document, diagnostics: this.builder.diagnostics, keySegments: this.builder.keySegments };
  }
}

class AstBuilder extends ExpressionAstBuilder {
  /** Offsets of digit-led key segments (`2x`): not malformed numbers, whatever the lexer said. */
  readonly keySegments = new Set<number>();
  /** The text of each run of `///` lines, by the offset of what it documents. */
  private readonly docs: ReadonlyMap<number, string>;
  private readonly depth = new DepthMeter();

  constructor(
    file: string,
    lines: LineIndex,
    docComments: readonly IToken[],
    private readonly text: string,
    /** Top-level blocks already converted while parsing, by their node. */
    private readonly early: ReadonlyMap<CstNode, ast.Block[]> = new Map(),
  ) {
    super(file, lines);
    this.docs = indexDocComments(docComments, text);
  }

  private docAt(offset: number): string | undefined {
    return this.docs.get(offset);
  }

  build(cst: CstNode): ast.Document {
    const c = cst.children as Children;
    const imports = nodes(c, "importDecl").flatMap((n) => this.importDecl(n));
    const blocks = nodes(c, "block").flatMap((n) => this.early.get(n) ?? this.block(n));
    const closedEarly = this.misplacedBlocks(blocks, tokens(c, "strayBrace"));
    const strays = [
      ...nodes(c, "stray").map((n) => tokens(n.children as Children, "Stray")[0]),
      ...tokens(c, "strayBrace").filter((tok) => tok !== closedEarly),
    ];
    for (const tok of strays) if (tok) this.stray(tok, "a block such as 'experiment NAME { ... }'");
    for (const late of nodes(c, "lateImport")) {
      this.misplaced(late, "imports must come before the first block", "move this import to the top of the file");
    }
    for (const field of nodes(c, "topLevelField")) {
      this.misplaced(
        field,
        "a field must be inside a block",
        "top-level declarations are blocks such as 'experiment NAME { ... }'",
      );
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
      const block = at(blocks, i);
      const kind = block.type.name;
      const experimentOnly = EXPERIMENT_ONLY_BLOCKS.has(kind);
      const before = at(blocks, i - 1);
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
      const kinds = [
        ...new Set(
          blocks
            .slice(i)
            .filter((b) => EXPERIMENT_ONLY_BLOCKS.has(b.type.name) || b.name === undefined)
            .map((b) => `'${b.type.name}'`),
        ),
      ];
      this.diagnostics.push({
        code: "syntax-error",
        severity: "error",
        message: `this '}' closes experiment '${before.name.name}' early: the ${kinds.join(", ")} block${kinds.length > 1 ? "s" : ""} after it belong${kinds.length > 1 ? "" : "s"} inside it`,
        file: this.file,
        range: this.range(close, close + 1),
        hint: `delete this '}' (the experiment is closed again on line ${this.lines.position(leftOver.startOffset).line})`,
      });
    }
    return closedEarly;
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

  topLevelBlock(n: CstNode): ast.Block[] {
    return this.block(n);
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
    return {
      kind: "Reference",
      parts,
      range: this.range(at(parts, 0).range.start.offset, last(parts).range.end.offset),
    };
  }

  protected body(n: CstNode): ast.Entry[] {
    const c = n.children as Children;
    for (const s of nodes(c, "stray")) {
      const first = tokens(s.children, "Stray")[0];
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
    this.syntaxError(
      name,
      `expected ':' or '{' after '${name.image}'${found}`,
      "a field is written 'name: value', a block 'name { ... }'",
    );
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
    this.diagnostics.push({
      code: "syntax-error",
      severity: "error",
      message,
      file: this.file,
      range: this.range(start, range.end.offset),
      hint,
    });
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
        range: at(path, MAX_EXPRESSION_DEPTH).range,
        hint: "write the field inside its blocks, or shorten the name",
      });
      const value = this.invalid(this.range(at(path, 0).range.start.offset, range.end.offset));
      this.depth.flat(value);
      return [{ kind: "Field", path: path.slice(0, 1), value, ...(doc !== undefined ? { doc } : {}), range }];
    }
    const value = exprNode
      ? this.bounded(this.expression(exprNode), path.length - 1)
      : this.invalid(this.range(range.end.offset, range.end.offset));
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
      (node.kind === "Block"
        ? node.type.range
        : node.kind === "Member"
          ? node.property.range
          : this.range(start, start + (node.kind === "Unary" ? node.operator.length : 1)));
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
    const start = at(parts, 0).startOffset;
    const end = tokenEndOffset(last(parts));
    // Every piece (names and the '-' between them) must touch the next: no spaces, no comments.
    const pieces = [...parts, ...tokens(c, "Minus")].sort((a, b) => a.startOffset - b.startOffset);
    const gap = pieces.some((p, i) => i > 0 && tokenEndOffset(at(pieces, i - 1)) !== p.startOffset);
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
}

/**
 * Blocks that exist only as part of an experiment (its variants, constraints and `allow` list);
 * every other kind of block is also a top-level declaration (`declarationKinds` in semantics).
 */
const EXPERIMENT_ONLY_BLOCKS: ReadonlySet<string> = new Set(["sweep", "ablation", "constraints", "allow"]);
