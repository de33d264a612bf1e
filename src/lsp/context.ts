// What is being written at the cursor, read from the tokens before it rather than from the
// syntax tree: completion is asked for inside unfinished text (`algorithm { adv|`, `baseline: |`,
// `outcome.|`), where the parser has to recover and the tree says little. The scan keeps a
// stack of open brackets, each with the state of the entry being written in it.
import { tokenMatcher, type IToken } from "chevrotain";
import { lex, tokenEndOffset } from "../language/lexer.js";
import * as t from "../language/tokens.js";
import { blockPlace, fieldPath, recordPlace, topPlace, type Place } from "./paths.js";

export type CursorContext =
  /** Between top-level declarations: block kinds and `import`. */
  | { readonly kind: "top"; readonly prefix: Prefix }
  /** A field name (or block kind) at `place`, after `keyPrefix.` when a dotted path is being written. */
  | {
      readonly kind: "key";
      readonly place: Place;
      readonly keyPrefix: readonly string[];
      readonly prefix: Prefix;
      readonly scope: Scope;
      /** The cursor follows a value on the same line: an operator keyword may come next too. */
      readonly operators?: boolean;
    }
  /** After `name:` (or in its list, call or parentheses). */
  | {
      readonly kind: "value";
      readonly field: readonly string[] | undefined;
      readonly inList: boolean;
      /** Inside the arguments of a call such as `constant(...)`. */
      readonly inCall: boolean;
      readonly place: Place;
      readonly prefix: Prefix;
      readonly scope: Scope;
    }
  /** After `a.b.` inside a value. */
  | { readonly kind: "member"; readonly field: readonly string[] | undefined; readonly chain: readonly string[]; readonly prefix: Prefix; readonly scope: Scope }
  /** After a list item or argument: an operator keyword may follow. */
  | { readonly kind: "operator"; readonly prefix: Prefix }
  /** After `type name`: `extends` may follow. */
  | { readonly kind: "header"; readonly prefix: Prefix }
  /** After `extends` (and `alias.`). */
  | { readonly kind: "extends"; readonly blockType: string; readonly chain: readonly string[]; readonly prefix: Prefix; readonly scope: Scope }
  /** Inside the string of an import. */
  | { readonly kind: "import"; readonly written: string; readonly prefix: Prefix }
  | { readonly kind: "none" };

/** The word being completed: its start offset and the text typed so far. */
export interface Prefix {
  readonly start: number;
  readonly text: string;
}

/** The top-level declaration the cursor is in. */
export interface Scope {
  readonly topType: string | undefined;
  readonly topName: string | undefined;
}

type State =
  | "start"
  | "key"
  | "keyDot"
  | "keyDash"
  | "header"
  | "extends"
  | "extendsRef"
  | "extendsDot"
  | "value"
  | "afterValue"
  | "member"
  | "import"
  | "importDone"
  | "importAs";

interface Frame {
  readonly kind: "top" | "block" | "record" | "list" | "call" | "paren";
  /** For top/block/record: the place of its entries. For list/call/paren: the enclosing entries' place. */
  readonly place: Place;
  /** For list/call/paren: the field whose value this is. */
  readonly field: readonly string[] | undefined;
  state: State;
  key: string[];
  keyStart: number;
  blockType: string | undefined;
  blockName: string | undefined;
  ref: string[];
  chain: string[];
  /** Line of the last token of the value being written (for operator keywords). */
  valueEndLine: number;
  /** The field of the value being written in this frame. */
  valueField: readonly string[] | undefined;
}

function frame(kind: Frame["kind"], place: Place, field?: readonly string[]): Frame {
  return {
    kind,
    place,
    field,
    state: kind === "top" || kind === "block" || kind === "record" ? "start" : "value",
    key: [],
    keyStart: 0,
    blockType: undefined,
    blockName: undefined,
    ref: [],
    chain: [],
    valueEndLine: -1,
    valueField: field,
  };
}

const isEntries = (f: Frame) => f.kind === "top" || f.kind === "block" || f.kind === "record";

const wordTypes = new Set([t.Identifier, ...t.keywordTokens]);
const operators = [t.When, t.Or, t.And, t.ComparisonOp, t.MultiplicativeOp];

/** Whether `tok` is an identifier or a keyword (a word the user may be in the middle of). */
function isWord(tok: IToken): boolean {
  return wordTypes.has(tok.tokenType);
}

export function cursorContext(text: string, offset: number): CursorContext {
  const lexed = lex(text, "");
  // Inside a comment: nothing to complete.
  for (const c of lexed.comments) {
    const cEnd = tokenEndOffset(c);
    if (c.startOffset >= offset || offset > cEnd) continue;
    const closedBlock = c.image.startsWith("/*") && c.image.length >= 4 && c.image.endsWith("*/");
    if (!closedBlock || offset < cEnd) return { kind: "none" };
  }
  const tokens = lexed.tokens;
  let prefix: Prefix = { start: offset, text: "" };
  let stringAtCursor: IToken | undefined;
  let end = 0;
  for (; end < tokens.length; end++) {
    const tok = tokens[end]!;
    if (tok.startOffset >= offset) break;
    const tokEnd = tokenEndOffset(tok);
    if (tokEnd >= offset) {
      if (isWord(tok) && tokEnd >= offset) {
        prefix = { start: tok.startOffset, text: text.slice(tok.startOffset, offset) };
        break;
      }
      if (tokenMatcher(tok, t.StringToken) && (offset < tokEnd || !closed(tok))) {
        stringAtCursor = tok;
        break;
      }
    }
  }

  const stack: Frame[] = [frame("top", { path: undefined, mode: "normal", topType: undefined })];
  let topType: string | undefined;
  let topName: string | undefined;
  const top = () => stack[stack.length - 1]!;

  const popTo = (kinds: readonly Frame["kind"][]): Frame | undefined => {
    for (let i = stack.length - 1; i > 0; i--) {
      if (kinds.includes(stack[i]!.kind)) {
        const popped = stack[i]!;
        stack.length = i;
        return popped;
      }
    }
    return undefined;
  };

  const lineOf = (tok: IToken) => tok.startLine ?? 0;

  for (let i = 0; i < end; i++) {
    const tok = tokens[i]!;
    const f = top();
    const type = tok.tokenType;
    if (type === t.LBrace) {
      if (isEntries(f) && (f.state === "key" || f.state === "header" || f.state === "extendsRef")) {
        const blockType = f.state === "key" ? f.key[0] : f.blockType;
        const blockName = f.state === "key" ? undefined : f.blockName;
        if (blockType === undefined) {
          stack.push(frame("record", { path: undefined, mode: "normal", topType }));
          continue;
        }
        let place: Place;
        if (f.kind === "top") {
          topType = blockType;
          topName = blockName;
          place = topPlace(blockType, blockName);
        } else place = blockPlace(f.place, blockType, blockName);
        f.state = "start";
        stack.push(frame("block", place));
      } else if (f.state === "value" && isEntries(f)) {
        stack.push(frame("record", f.place.mode === "ablation" ? { path: [], mode: "normal", topType } : recordPlace(f.place, f.key)));
      } else if (f.state === "value") {
        const path = f.field ? (f.kind === "list" && f.place.mode !== "sweep" ? [...f.field, "0"] : [...f.field]) : undefined;
        stack.push(frame("record", { path, mode: "normal", topType }));
      } else {
        stack.push(frame("record", { path: undefined, mode: "normal", topType }));
      }
      continue;
    }
    if (type === t.RBrace) {
      const popped = popTo(["block", "record"]);
      const parent = top();
      if (popped?.kind === "block") parent.state = "start";
      else if (popped) {
        parent.state = "afterValue";
        parent.chain = [];
        parent.valueEndLine = tok.endLine ?? lineOf(tok);
      }
      if (stack.length === 1) {
        topType = undefined;
        topName = undefined;
        parent.state = "start";
      }
      continue;
    }
    if (type === t.LBracket) {
      stack.push(frame("list", f.place, isEntries(f) ? f.valueField : f.field));
      continue;
    }
    if (type === t.LParen) {
      stack.push(frame(f.state === "afterValue" ? "call" : "paren", f.place, isEntries(f) ? f.valueField : f.field));
      continue;
    }
    if (type === t.RBracket || type === t.RParen) {
      const popped = popTo(type === t.RBracket ? ["list"] : ["call", "paren"]);
      if (popped) {
        const parent = top();
        parent.state = "afterValue";
        parent.chain = [];
        parent.valueEndLine = lineOf(tok);
      }
      continue;
    }
    if (type === t.Comma) {
      f.state = isEntries(f) ? "start" : "value";
      continue;
    }
    if (type === t.Colon) {
      if (isEntries(f) && f.state === "key") {
        f.state = "value";
        f.valueField = fieldPath(f.place, f.key);
      } else if (f.state === "afterValue") f.state = "value"; // a named argument `name: value`
      continue;
    }
    if (type === t.Dot) {
      if (f.state === "key") f.state = "keyDot";
      else if (f.state === "afterValue" && f.chain.length > 0) f.state = "member";
      else if (f.state === "extendsRef") f.state = "extendsDot";
      continue;
    }
    if (type === t.Minus && f.state === "key") {
      f.state = "keyDash";
      continue;
    }
    if (type === t.Import && f.kind === "top") {
      f.state = "import";
      continue;
    }
    if (type === t.As && f.state === "importDone") {
      f.state = "importAs";
      continue;
    }
    if (type === t.Extends && (f.state === "key" || f.state === "header")) {
      if (f.state === "key") {
        f.blockType = f.key[0];
        f.blockName = undefined;
      }
      f.state = "extends";
      f.ref = [];
      continue;
    }
    if (type === t.Identifier) {
      const name = tok.image;
      switch (f.state) {
        case "start":
          f.key = [name];
          f.keyStart = tok.startOffset;
          f.state = "key";
          break;
        case "key":
          f.blockType = f.key[0];
          f.blockName = name;
          f.state = "header";
          break;
        case "keyDot":
          f.key.push(name);
          f.state = "key";
          break;
        case "keyDash":
          f.key[f.key.length - 1] += `-${name}`;
          f.state = "key";
          break;
        case "extends":
          f.ref = [name];
          f.state = "extendsRef";
          break;
        case "extendsDot":
          f.ref.push(name);
          f.state = "extendsRef";
          break;
        case "value":
          f.chain = [name];
          f.state = "afterValue";
          f.valueEndLine = lineOf(tok);
          break;
        case "member":
          f.chain.push(name);
          f.state = "afterValue";
          f.valueEndLine = lineOf(tok);
          break;
        case "afterValue":
          if (isEntries(f)) {
            f.key = [name];
            f.keyStart = tok.startOffset;
            f.state = "key";
          } else {
            f.chain = [name];
            f.valueEndLine = lineOf(tok);
          }
          break;
        case "importAs":
          f.state = "start";
          break;
        case "import":
        case "importDone":
          f.key = [name];
          f.keyStart = tok.startOffset;
          f.state = "key";
          break;
        default:
          break;
      }
      continue;
    }
    if (tokenMatcher(tok, t.StringToken)) {
      if (f.state === "import") f.state = "importDone";
      else if (f.state === "start" && isEntries(f)) {
        f.key = [stringValue(tok.image)];
        f.keyStart = tok.startOffset;
        f.state = "key";
      } else if (f.state === "value" || f.state === "afterValue") {
        f.state = "afterValue";
        f.chain = [];
        f.valueEndLine = tok.endLine ?? lineOf(tok);
      }
      continue;
    }
    if (tokenMatcher(tok, t.NumberToken) && f.state === "keyDash") {
      // A digit-led segment of a kebab-case key (`turn-budget-below-2x-optimal`).
      f.key[f.key.length - 1] += `-${tok.image}`;
      f.state = "key";
      continue;
    }
    if (tokenMatcher(tok, t.NumberToken) || type === t.True || type === t.False || type === t.None) {
      if (f.state === "value" || f.state === "afterValue") {
        f.state = "afterValue";
        f.chain = [];
        f.valueEndLine = lineOf(tok);
      }
      continue;
    }
    if (type === t.Not) {
      if (f.state === "afterValue") f.state = "value";
      continue;
    }
    if (tokenMatcher(tok, t.AdditiveOp) || operators.some((op) => tokenMatcher(tok, op))) {
      if (f.state === "afterValue" || f.state === "value") {
        f.state = "value";
        f.chain = [];
      }
      continue;
    }
  }

  const f = top();
  const scope: Scope = { topType, topName };
  if (stringAtCursor) {
    if (f.kind === "top" && f.state === "import") {
      const written = text.slice(stringAtCursor.startOffset + 1, offset);
      return { kind: "import", written, prefix: { start: stringAtCursor.startOffset + 1, text: written } };
    }
    return { kind: "none" };
  }
  const valueField = isEntries(f) ? f.valueField : f.field;
  switch (f.state) {
    case "start":
      if (f.kind === "top") return { kind: "top", prefix };
      if (!isEntries(f)) return { kind: "value", field: valueField, inList: f.kind === "list", inCall: f.kind === "call", place: f.place, prefix, scope };
      return { kind: "key", place: f.place, keyPrefix: [], prefix, scope };
    case "keyDot":
      return isEntries(f) && f.kind !== "top" ? { kind: "key", place: f.place, keyPrefix: [...f.key], prefix, scope } : { kind: "none" };
    case "keyDash":
      return isEntries(f) && f.kind !== "top"
        ? { kind: "key", place: f.place, keyPrefix: [], prefix: { start: f.keyStart, text: text.slice(f.keyStart, offset) }, scope }
        : { kind: "none" };
    case "key":
      return f.kind === "top" ? { kind: "none" } : { kind: "header", prefix };
    case "header":
      return { kind: "header", prefix };
    case "extends":
      return { kind: "extends", blockType: f.blockType ?? "", chain: [], prefix, scope };
    case "extendsDot":
      return { kind: "extends", blockType: f.blockType ?? "", chain: [...f.ref], prefix, scope };
    case "value":
      return { kind: "value", field: valueField, inList: f.kind === "list", inCall: f.kind === "call", place: f.place, prefix, scope };
    case "member":
      return { kind: "member", field: valueField, chain: [...f.chain], prefix, scope };
    case "afterValue": {
      const cursorLine = lineAt(text, offset);
      if (!isEntries(f)) return { kind: "operator", prefix };
      if (f.kind === "top") return { kind: "top", prefix };
      return { kind: "key", place: f.place, keyPrefix: [], prefix, scope, ...(f.valueEndLine === cursorLine ? { operators: true } : {}) };
    }
    default:
      return { kind: "none" };
  }
}

function closed(tok: IToken): boolean {
  return tok.tokenType === t.StringLiteral || tok.tokenType === t.TripleString;
}

function stringValue(image: string): string {
  try {
    return JSON.parse(image) as string;
  } catch {
    return image.replace(/^"+|"+$/g, "");
  }
}

/** 1-based line of `offset`, as chevrotain counts lines. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 10) line++;
    else if (ch === 13 && text.charCodeAt(i + 1) !== 10) line++;
  }
  return line;
}
