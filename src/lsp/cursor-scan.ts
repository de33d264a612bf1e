// The scan behind completion's cursor context (context.ts): the tokens before the cursor, read
// left to right with a stack of open brackets, each frame holding the state of the entry being
// written in it. No syntax tree: the text at the cursor is unfinished.
import { tokenMatcher, type IToken } from "chevrotain";
import { at, last } from "../contracts/checked.js";
import * as t from "../language/tokens.js";
import { blockPlace, fieldPath, recordPlace, topPlace, type Place } from "./paths.js";

export type State =
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

export interface Frame {
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

export const isEntries = (f: Frame) => f.kind === "top" || f.kind === "block" || f.kind === "record";

const operators = [t.When, t.Or, t.And, t.ComparisonOp, t.MultiplicativeOp];

/** Where the scan stopped: the innermost open frame, and the top-level declaration it is in. */
export interface ScanResult {
  readonly frame: Frame;
  readonly topType: string | undefined;
  readonly topName: string | undefined;
}

/** Reads `tokens[0..end)` and returns the state at the end. */
export function scanTokens(tokens: readonly IToken[], end: number): ScanResult {
  const stack: Frame[] = [frame("top", { path: undefined, mode: "normal", topType: undefined })];
  let topType: string | undefined;
  let topName: string | undefined;
  const top = () => last(stack);

  const popTo = (kinds: readonly Frame["kind"][]): Frame | undefined => {
    for (let i = stack.length - 1; i > 0; i--) {
      const popped = at(stack, i);
      if (kinds.includes(popped.kind)) {
        stack.length = i;
        return popped;
      }
    }
    return undefined;
  };

  const lineOf = (tok: IToken) => tok.startLine ?? 0;

  for (let i = 0; i < end; i++) {
    const tok = at(tokens, i);
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
        stack.push(
          frame(
            "record",
            f.place.mode === "ablation" ? { path: [], mode: "normal", topType } : recordPlace(f.place, f.key),
          ),
        );
      } else if (f.state === "value") {
        const path = f.field
          ? f.kind === "list" && f.place.mode !== "sweep"
            ? [...f.field, "0"]
            : [...f.field]
          : undefined;
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
  return { frame: top(), topType, topName };
}

function stringValue(image: string): string {
  try {
    return JSON.parse(image) as string;
  } catch {
    return image.replace(/^"+|"+$/g, "");
  }
}
