// Reading a chevrotain CST node's children: subrule nodes or tokens under one key, without the
// tokens that error recovery invented.
import type { CstElement, CstNode, IToken } from "chevrotain";

export type Children = Record<string, CstElement[] | undefined>;

export function isToken(e: CstElement): e is IToken {
  return (e as IToken).tokenType !== undefined;
}

const EMPTY: never[] = [];

/** A key of a CST node holds either subrule nodes or tokens, never both. */
export function nodes(children: Children, key: string): CstNode[] {
  return (children[key] as CstNode[] | undefined) ?? EMPTY;
}

export function tokens(children: Children, key: string): IToken[] {
  const list = children[key] as IToken[] | undefined;
  if (!list) return EMPTY;
  // Copy only in the rare case that recovery inserted a token.
  return list.some(isInserted) ? list.filter((tok) => !isInserted(tok)) : list;
}

/** Tokens invented by single-token-insertion recovery have no real position. */
function isInserted(tok: IToken): boolean {
  return tok.isInsertedInRecovery === true || Number.isNaN(tok.startOffset);
}

export function firstOffset(e: CstElement): number {
  if (isToken(e)) return e.startOffset;
  const start = e.location?.startOffset;
  return start === undefined || Number.isNaN(start) ? Number.POSITIVE_INFINITY : start;
}
