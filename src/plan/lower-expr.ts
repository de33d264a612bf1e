// Lowering expressions: the semantic IR as the plan's plain data.
import type { RewardExpr } from "../semantics/expressions.js";
import type { PlanExpr } from "./schema.js";

/** The IR as plain data, with constant arithmetic folded (`-0.2` inside an expression is the number -0.2). */
export function lowerExpr(e: RewardExpr): PlanExpr {
  switch (e.op) {
    case "const":
      return { op: "const", value: e.value };
    case "signal":
      return {
        op: "signal",
        namespace: e.namespace,
        ...(e.env !== undefined ? { env: e.env } : {}),
        name: e.name,
        type: e.type,
        timing: e.timing,
      };
    default: {
      const args = e.args.map(lowerExpr);
      const nums = args.map((a) => (a.op === "const" && typeof a.value === "number" ? a.value : undefined));
      if (e.op === "neg" && nums[0] !== undefined) return { op: "const", value: nums[0] === 0 ? 0 : -nums[0] };
      if (
        (e.op === "+" || e.op === "-" || e.op === "*" || e.op === "/" || e.op === "%") &&
        nums[0] !== undefined &&
        nums[1] !== undefined
      ) {
        const a = nums[0];
        const b = nums[1];
        const r = e.op === "+" ? a + b : e.op === "-" ? a - b : e.op === "*" ? a * b : e.op === "/" ? a / b : a % b;
        if (Number.isFinite(r)) return { op: "const", value: Object.is(r, -0) ? 0 : r };
      }
      return { op: e.op, args } as PlanExpr;
    }
  }
}
