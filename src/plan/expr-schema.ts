// The expression IR in the plan: reward terms, constraint conditions and the success criterion.
import * as z from "zod";
import { d } from "./schema-parts.js";

/** The typed expression IR of semantics/expressions.ts, as the runtime evaluates it. */
export type PlanExpr =
  | { op: "const"; value: number | string | boolean }
  | {
      op: "signal";
      namespace: "outcome" | "state" | "episode" | "env" | "tool" | "named_env";
      env?: string;
      name: string;
      type: "bool" | "number" | "count" | "string";
      timing: "outcome" | "state";
    }
  | {
      op: "+" | "-" | "*" | "/" | "%" | "==" | "!=" | "<" | "<=" | ">" | ">=" | "and" | "or" | "when";
      args: [PlanExpr, PlanExpr];
    }
  | { op: "neg" | "not" | "abs"; args: [PlanExpr] }
  | { op: "min" | "max"; args: PlanExpr[] }
  | { op: "clip"; args: [PlanExpr, PlanExpr, PlanExpr] }
  | { op: "contains" | "starts_with" | "matches"; args: [PlanExpr, PlanExpr] };

export const exprSchema: z.ZodType<PlanExpr> = z
  .lazy(() =>
    z.union([
      z.strictObject({ op: z.literal("const"), value: z.union([z.number(), z.string(), z.boolean()]) }),
      z.strictObject({
        op: z.literal("signal"),
        namespace: d(
          z.enum(["outcome", "state", "episode", "env", "tool", "named_env"]),
          "outcome/state/env: a signal every env declares; episode: reported by the harness; tool: the call being checked, before it runs (constraints only; written call.*); named_env: one env's signal.",
        ),
        env: d(z.string().optional(), "For named_env: the env whose signal this is."),
        name: d(z.string(), "Signal name; for tool.args.X it is `args.X`."),
        type: z.enum(["bool", "number", "count", "string"]),
        timing: d(z.enum(["outcome", "state"]), "outcome: known at the end of the episode; state: after every step."),
      }),
      z.strictObject({
        op: d(
          z.enum(["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "when"]),
          "Binary operators; `when` is args[0] when args[1] holds, else 0. Booleans are 0/1 in arithmetic.",
        ),
        args: z.tuple([exprSchema, exprSchema]),
      }),
      z.strictObject({ op: z.enum(["neg", "not", "abs"]), args: z.tuple([exprSchema]) }),
      z.strictObject({ op: z.enum(["min", "max"]), args: z.array(exprSchema).min(2) }),
      z.strictObject({
        op: z.literal("clip"),
        args: d(z.tuple([exprSchema, exprSchema, exprSchema]), "value, low, high"),
      }),
      z.strictObject({
        op: d(
          z.enum(["contains", "starts_with", "matches"]),
          "String tests: args[0] contains / starts with args[1], or matches the regular expression args[1] (ECMA-262).",
        ),
        args: z.tuple([exprSchema, exprSchema]),
      }),
    ]),
  )
  .meta({ id: "Expr", description: "A typed expression over run-time signals (docs/semantics.md §2)." });
