// The formatter's layout language and its renderer.
//
// A small Wadler-style document: a group is printed flat (its lines as their flat text) when
// it fits on the rest of the line, otherwise broken (its lines as newlines). `hard` marks a
// document that can never be flat; it propagates to every enclosing group at construction.

import { at } from "../../contracts/checked.js";

/** The column limit for lists, call arguments and one-line blocks. */
export const LINE_WIDTH = 100;
const INDENT = 2;

export type Doc = string | DocNode;
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
export const concat = (parts: readonly Doc[]): Doc => ({ kind: "concat", parts, hard: parts.some(isHard) });
export const indent = (contents: Doc): Doc => ({ kind: "indent", contents, hard: isHard(contents) });
export const group = (contents: Doc, forceBreak = false): Doc => ({
  kind: "group",
  contents,
  hard: forceBreak || isHard(contents),
});
export const line: Doc = { kind: "line", flat: " ", hard: false, literal: false };
export const softline: Doc = { kind: "line", flat: "", hard: false, literal: false };
export const hardline: Doc = { kind: "line", flat: "", hard: true, literal: false };
export const literalline: Doc = { kind: "line", flat: "", hard: true, literal: true };
export const ifBreak = (broken: string, flat = ""): Doc => ({ kind: "ifBreak", broken, flat, hard: false });
export const trail = (text: string): Doc => ({ kind: "trail", text, hard: false });

const FLAT = 0;
const BREAK = 1;
type Command = [indentation: number, mode: number, doc: Doc];

/** The text of a document, lines of at most LINE_WIDTH columns where a group may break. */
export function render(doc: Doc): string {
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
  for (let cmd = stack.pop(); cmd !== undefined; cmd = stack.pop()) {
    const [ind, mode, d] = cmd;
    if (typeof d === "string") {
      emit(d);
      continue;
    }
    switch (d.kind) {
      case "concat":
        for (let i = d.parts.length - 1; i >= 0; i--) stack.push([ind, mode, at(d.parts, i)]);
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
      cmd = at(rest, --restIndex);
    }
    const [ind, mode, d] = cmd;
    if (typeof d === "string") {
      width -= d.length;
      continue;
    }
    switch (d.kind) {
      case "concat":
        for (let i = d.parts.length - 1; i >= 0; i--) cmds.push([ind, mode, at(d.parts, i)]);
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
