import * as z from "zod";
import { didYouMean } from "../../contracts/suggest.js";
import { doc, enumOf, isPlainCall, reportDiagnostic, rewardExpression, type PlainCall } from "./common.js";

/** Entries of `reward` other than these are named terms. */
export const rewardSettingNames = ["on_env_error"] as const;

export const rewardSchema = z
  .object({
    on_env_error: doc(
      enumOf(["exclude", "score_zero"]).default("exclude"),
      "Episodes whose env failed: `exclude` them from the update (counted apart), or score them 0 like a policy failure.",
    ),
  })
  .catchall(rewardExpression);

/** `constraints { NAME: block(condition) }`: hard blocks, enforced by the harness. */
const isBlockCall = (v: unknown): v is PlainCall =>
  isPlainCall(v) && v.$call === "block" && v.args.length === 1 && Object.keys(v.named).length === 0;

export const constraintSchema = z.preprocess((v, ctx) => {
  if (isBlockCall(v)) return v;
  const example = 'e.g. block(tool.name == "execute")';
  if (isPlainCall(v) && v.$call === "block")
    reportDiagnostic(ctx, {
      code: "invalid-call",
      message: "block(...) takes one condition: the calls or states it blocks",
      hint: example,
    });
  else if (isPlainCall(v)) {
    const suggestion = didYouMean(v.$call, ["block"]);
    reportDiagnostic(ctx, {
      code: "invalid-value",
      message: `{where} expects block(condition), found ${v.$call}(...)`,
      hint: suggestion ? `did you mean 'block(...)'?` : example,
    });
  } else
    reportDiagnostic(ctx, {
      code: "type-mismatch",
      message: "{where} expects block(condition), found {found}",
      hint: example,
    });
  return v;
}, z.custom<PlainCall>(isBlockCall));

export const constraintsSchema = z.record(z.string(), constraintSchema);
