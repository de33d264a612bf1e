// The node printers: a syntax tree and its placed comments -> a layout document.
import type { IToken } from "chevrotain";
import type * as ast from "../ast.js";
import { expressionPrecedence, precedence } from "../ast.js";
import { at, last } from "../../contracts/checked.js";
import { CommentPlacement, FormatError, type Comment } from "./comments.js";
import {
  concat,
  group,
  hardline,
  ifBreak,
  indent,
  line,
  literalline,
  render,
  softline,
  trail,
  type Doc,
} from "./doc.js";
import { printString, quoteString } from "./strings.js";

const isDocElement = (e: { kind: "comment"; c: Comment } | { kind: "span" }): boolean =>
  e.kind === "comment" && e.c.isDoc;

/** Prints one file's syntax tree in the canonical style, with every comment of the file. */
export class Printer {
  private readonly placement: CommentPlacement;

  constructor(text: string, comments: readonly IToken[]) {
    this.placement = new CommentPlacement(text, comments);
  }

  print(document: ast.Document): string {
    this.placement.place(document);
    const out = render(this.printDocument(document));
    return out
      .split("\n")
      .map((l) => l.replace(/[ \t]+$/, ""))
      .join("\n");
  }

  // --- comments around nodes --------------------------------------------------------------------

  private commentDoc(c: Comment): Doc {
    if (!c.text.includes("\n")) return trail(c.text);
    const lines = c.text.split("\n");
    return concat(lines.flatMap((l, i): Doc[] => (i === 0 ? [trail(l)] : [literalline, trail(l)])));
  }

  /**
   * `doc` preceded by the comments anchored to `key`, each followed by a space or, after a line
   * comment, a new line (indented as a continuation unless `indentBreak` is false).
   */
  private withComments(
    map: Map<object, Comment[]>,
    key: object,
    doc: Doc,
    options: { spaceBefore?: boolean; indentBreak?: boolean } = {},
  ): Doc {
    const list = map.get(key);
    if (!list) return doc;
    const parts: Doc[] = options.spaceBefore ? [" "] : [];
    const newline = options.indentBreak === false ? hardline : indent(hardline);
    for (const c of list) parts.push(this.commentDoc(c), c.isLine ? newline : " ");
    parts.push(doc);
    return concat(parts);
  }

  private anchor(node: ast.Node, doc: Doc): Doc {
    return this.withComments(this.placement.anchored, node, doc);
  }

  // --- sequences of spans ---------------------------------------------------------------------

  /**
   * The inside of a container: its spans with their comments, separated per `style`.
   * `body`: entries, separated by ", " when flat and by new lines when broken.
   * `list`: items, each followed by "," (the last only when broken).
   * `document`: top-level imports and blocks, one blank line before the first block and between blocks.
   */
  private sequence(
    key: object,
    spans: readonly { node: ast.Node; doc: Doc }[],
    style: "body" | "list" | "document",
  ): Doc[] {
    type Element =
      { kind: "comment"; c: Comment; role: "leading" | "trailing" | "dangling" } | { kind: "span"; index: number };
    const elements: Element[] = [];
    spans.forEach((s, index) => {
      for (const c of this.placement.leading.get(s.node) ?? []) elements.push({ kind: "comment", c, role: "leading" });
      elements.push({ kind: "span", index });
      const trailing = [...(this.placement.trailing.get(s.node) ?? [])].sort((a, b) => a.start - b.start);
      for (const c of trailing) elements.push({ kind: "comment", c, role: "trailing" });
    });
    for (const c of this.placement.dangling.get(key) ?? []) elements.push({ kind: "comment", c, role: "dangling" });

    const startOf = (e: Element) => (e.kind === "comment" ? e.c.start : at(spans, e.index).node.range.start.offset);
    const startAt = (i: number) => startOf(at(elements, i));
    const endOf = (e: Element) => (e.kind === "comment" ? e.c.end : at(spans, e.index).node.range.end.offset);
    // The span a leading comment belongs to is the next span.
    const spanAfter = (i: number) => {
      for (let j = i; j < elements.length; j++) {
        const f = at(elements, j);
        if (f.kind === "span") return at(spans, f.index).node;
      }
      return undefined;
    };
    const commaBefore = style === "list" ? new Set<number>() : this.docSeparators(elements, startAt);
    const parts: Doc[] = [];
    // Whether the output is still on the last line of the previous span: trailing comments go
    // there, until a line comment (or one spanning lines) ends it.
    let onSpanLine = false;
    for (let i = 0; i < elements.length; i++) {
      const e = at(elements, i);
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
          if (prev.kind === "span" && e.kind === "span")
            parts.push(style === "body" ? concat([ifBreak("", ","), line]) : style === "list" ? line : hardline);
          else parts.push(style === "list" ? line : hardline);
          // At the top level, a block (with the comments above it) follows exactly one blank line.
          const startsGroup =
            (e.kind === "span" || e.role === "leading") && !(prev.kind === "comment" && prev.role === "leading");
          const forced = style === "document" && startsGroup && spanAfter(i)?.kind === "Block";
          if (forced || this.placement.blankBetween(endOf(prev), startOf(e)))
            parts.push(style === "document" ? hardline : softline);
        }
      }
      if (e.kind === "span") {
        parts.push(at(spans, e.index).doc);
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
  private docSeparators(
    elements: readonly ({ kind: "comment"; c: Comment } | { kind: "span" })[],
    startOf: (i: number) => number,
  ): Set<number> {
    const commas = new Set<number>();
    elements.forEach((e, i) => {
      if (e.kind !== "span") return;
      let first = i; // the first of the doc comments printed right before the entry
      while (first > 0 && isDocElement(at(elements, first - 1))) first--;
      let own = i; // the first of those that were right before it in the source too
      while (
        own > first &&
        /^\s*$/.test(this.placement.text.slice((elements[own - 1] as { c: Comment }).c.end, startOf(own)))
      )
        own--;
      if (own > first) commas.add(own);
    });
    return commas;
  }

  // --- declarations -----------------------------------------------------------------------------

  private printDocument(d: ast.Document): Doc {
    const spans = [
      ...d.imports.map((i) => ({ node: i, doc: this.printImport(i) })),
      ...d.blocks.map((b) => ({ node: b, doc: this.printBlock(b) })),
    ];
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
    parts.push(
      " ",
      this.withComments(this.placement.beforeOpen, b, this.printBraces(b, b.entries), { indentBreak: false }),
    );
    return concat(parts);
  }

  /** `{ entries }` of a block or record. */
  private printBraces(owner: ast.Block | ast.RecordExpression, entries: readonly ast.Entry[]): Doc {
    if (entries.length === 0 && !this.placement.dangling.has(owner)) return "{}";
    const { start, end } = owner.range;
    const inner = this.sequence(
      owner,
      entries.map((e) => ({ node: e, doc: e.kind === "Field" ? this.printField(e) : this.printBlock(e) })),
      "body",
    );
    const multiLine = start.line !== end.line || this.placement.hasCommentIn(start.offset, end.offset);
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
  private printBracketed(
    owner: object,
    open: string,
    close: string,
    items: readonly { node: ast.Node; doc: Doc }[],
    forceBreak: boolean,
  ): Doc {
    if (items.length === 0 && !this.placement.dangling.has(owner)) return open + close;
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
        return this.anchor(
          e,
          this.printBracketed(e, "[", "]", items, this.placement.hasCommentIn(start.offset, end.offset)),
        );
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
    let u = e;
    for (;;) {
      parts.push(this.anchor(u, u.operator === "not" ? "not " : u.operator));
      const operand = u.operand;
      const floor = u.operator === "not" ? precedence.not : precedence.unary;
      if (operand.kind === "Unary" && expressionPrecedence(operand) >= floor) {
        u = operand;
        continue;
      }
      parts.push(this.operand(operand, expressionPrecedence(operand) < floor));
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
    const parts: Doc[] = [
      this.operand(first, expressionPrecedence(first) < level || (!chainable && expressionPrecedence(first) <= level)),
    ];
    for (let i = rights.length - 1; i >= 0; i--) {
      const b = at(rights, i);
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
      const c = at(conditions, i);
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
    const numberBeforeDot = base.kind === "Number" && last(suffixes).kind === "Member";
    const parts: Doc[] = [this.operand(base, expressionPrecedence(base) < precedence.postfix || numberBeforeDot)];
    for (let i = suffixes.length - 1; i >= 0; i--) {
      const s = at(suffixes, i);
      if (s.kind === "Member") parts.push(".", this.anchor(s.property, s.property.name));
      else {
        const args = s.args.map((a) => ({ node: a, doc: this.printArgument(a) }));
        const paren = this.placement.skipTrivia(s.callee.range.end.offset, true);
        const forceBreak = this.placement.hasCommentIn(paren, s.range.end.offset);
        parts.push(
          this.withComments(this.placement.beforeOpen, s, this.printBracketed(s, "(", ")", args, forceBreak), {
            spaceBefore: true,
          }),
        );
      }
    }
    return concat(parts);
  }

  private printArgument(a: ast.Argument): Doc {
    const value = this.printExpression(a.value);
    return a.name ? concat([this.anchor(a.name, a.name.name), ": ", value]) : value;
  }
}
