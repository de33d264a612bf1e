// The depth bound of expression trees. Every later pass (evaluation, typing, lowering, the
// printer, the editor's hover) walks expressions recursively, so a field value deeper than the
// bound is reported and replaced by an `Invalid` node before any of them sees it. Measured
// without recursion: the trees it guards against are the ones too deep to recurse over.
import type * as ast from "./ast.js";
import { at, last } from "../contracts/checked.js";

/**
 * Levels of nesting an expression may have, counting one per operator of a chain (`a and b and
 * c` is two levels deep), per prefix, per `.name` or call, and per list, record or block around
 * it. Generous for real specs (a handful of levels), and a few hundred stack frames for every
 * recursive pass.
 */
export const MAX_EXPRESSION_DEPTH = 256;

type Measured = ast.Expression | ast.Entry | ast.Argument;

/** The nodes directly below `n`, and whether `n` itself counts as a level. */
function childrenOf(n: Measured): { readonly kids: readonly Measured[]; readonly level: number } {
  switch (n.kind) {
    case "Unary":
      return { kids: [n.operand], level: 1 };
    case "Binary":
      return { kids: [n.left, n.right], level: 1 };
    case "When":
      return { kids: [n.value, n.condition], level: 1 };
    case "Member":
      return { kids: [n.object], level: 1 };
    case "Call":
      return { kids: ([n.callee] as Measured[]).concat(n.args), level: 1 };
    case "List":
      return { kids: n.items, level: 1 };
    case "Record":
    case "Block":
      return { kids: n.entries, level: 1 };
    // A field is a level per dot of its name (`a.b: v` is `a { b: v }`); an argument, none.
    case "Field":
      return { kids: [n.value], level: n.path.length - 1 };
    case "Argument":
      return { kids: [n.value], level: 0 };
    default:
      return { kids: [], level: 1 };
  }
}

export interface DepthOverflow {
  /** The lowest node whose depth passes the bound (all of its children are within it). */
  readonly node: ast.Expression | ast.Block | ast.Field;
}

/**
 * Measures trees bottom-up and remembers every height it computed, so that measuring a field
 * after the fields nested inside it (the order the AST is built in) costs no second walk.
 */
export class DepthMeter {
  private readonly heights = new WeakMap<object, number>();

  /** The first node (in post-order) deeper than `limit`, or undefined if none. */
  overflow(root: ast.Expression, limit = MAX_EXPRESSION_DEPTH): DepthOverflow | undefined {
    if (this.heights.has(root)) return undefined;
    type Frame = {
      readonly node: Measured;
      readonly kids: readonly Measured[];
      readonly level: number;
      next: number;
      max: number;
    };
    const frame = (node: Measured): Frame => ({ node, ...childrenOf(node), next: 0, max: 0 });
    const stack: Frame[] = [frame(root)];
    while (stack.length > 0) {
      const top = last(stack);
      if (top.next < top.kids.length) {
        const kid = at(top.kids, top.next++);
        const known = this.heights.get(kid);
        if (known === undefined) stack.push(frame(kid));
        else if (known > top.max) top.max = known;
        continue;
      }
      stack.pop();
      const height = top.max + top.level;
      if (height > limit) return { node: top.node as ast.Expression | ast.Block | ast.Field };
      this.heights.set(top.node, height);
      const parent = stack[stack.length - 1];
      if (parent && height > parent.max) parent.max = height;
    }
    return undefined;
  }

  /** Records that `node` (a replacement for a tree that was too deep) is one level high. */
  flat(node: ast.Expression): void {
    this.heights.set(node, 1);
  }
}
