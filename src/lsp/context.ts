// What is being written at the cursor, read from the tokens before it rather than from the
// syntax tree: completion is asked for inside unfinished text (`algorithm { adv|`, `baseline: |`,
// `outcome.|`), where the parser has to recover and the tree says little. The scan keeps a
// stack of open brackets, each with the state of the entry being written in it (cursor-scan.ts).
import { tokenMatcher, type IToken } from "chevrotain";
import { at } from "../contracts/checked.js";
import { lex, tokenEndOffset } from "../language/lexer.js";
import * as t from "../language/tokens.js";
import { isEntries, scanTokens } from "./cursor-scan.js";
import type { Place } from "./paths.js";

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
  | {
      readonly kind: "member";
      readonly field: readonly string[] | undefined;
      readonly chain: readonly string[];
      readonly prefix: Prefix;
      readonly scope: Scope;
    }
  /** After a list item or argument: an operator keyword may follow. */
  | { readonly kind: "operator"; readonly prefix: Prefix }
  /** After `type name`: `extends` may follow. */
  | { readonly kind: "header"; readonly prefix: Prefix }
  /** After `extends` (and `alias.`). */
  | {
      readonly kind: "extends";
      readonly blockType: string;
      readonly chain: readonly string[];
      readonly prefix: Prefix;
      readonly scope: Scope;
    }
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

const wordTypes = new Set([t.Identifier, ...t.keywordTokens]);

/** Whether `tok` is an identifier or a keyword (a word the user may be in the middle of). */
function isWord(tok: IToken): boolean {
  return wordTypes.has(tok.tokenType);
}

export function cursorContext(text: string, offset: number): CursorContext {
  const lexed = lex(text, "", { keepComments: true });
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
    const tok = at(tokens, end);
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

  const { frame: f, topType, topName } = scanTokens(tokens, end);
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
      if (!isEntries(f))
        return {
          kind: "value",
          field: valueField,
          inList: f.kind === "list",
          inCall: f.kind === "call",
          place: f.place,
          prefix,
          scope,
        };
      return { kind: "key", place: f.place, keyPrefix: [], prefix, scope };
    case "keyDot":
      return isEntries(f) && f.kind !== "top"
        ? { kind: "key", place: f.place, keyPrefix: [...f.key], prefix, scope }
        : { kind: "none" };
    case "keyDash":
      return isEntries(f) && f.kind !== "top"
        ? {
            kind: "key",
            place: f.place,
            keyPrefix: [],
            prefix: { start: f.keyStart, text: text.slice(f.keyStart, offset) },
            scope,
          }
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
      return {
        kind: "value",
        field: valueField,
        inList: f.kind === "list",
        inCall: f.kind === "call",
        place: f.place,
        prefix,
        scope,
      };
    case "member":
      return { kind: "member", field: valueField, chain: [...f.chain], prefix, scope };
    case "afterValue": {
      const cursorLine = lineAt(text, offset);
      if (!isEntries(f)) return { kind: "operator", prefix };
      if (f.kind === "top") return { kind: "top", prefix };
      return {
        kind: "key",
        place: f.place,
        keyPrefix: [],
        prefix,
        scope,
        ...(f.valueEndLine === cursorLine ? { operators: true } : {}),
      };
    }
    default:
      return { kind: "none" };
  }
}

function closed(tok: IToken): boolean {
  return tok.tokenType === t.StringLiteral || tok.tokenType === t.TripleString;
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
