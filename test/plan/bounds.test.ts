// One table of upper bounds (src/plan/bounds.ts), used by both the plan schema (a plan file is
// refused at load, naming the field) and lowering (check reports the spec's field).
import path from "node:path";
import { describe, expect, it } from "vitest";
import type * as z from "zod";
import { Compiler } from "../../src/compiler.js";
import { boundViolations, PLAN_BOUNDS, type BoundedField } from "../../src/plan/bounds.js";
import { planSchema } from "../../src/plan/schema.js";
import { lower, workspace } from "./support.js";

/** The number schemas at a dotted plan path (`*`: any env, tool or list item). */
function numbersAt(schema: z.ZodType, pattern: readonly string[]): z.ZodNumber[] {
  const s = schema as z.ZodType & { def: Record<string, unknown> };
  const def = s.def as {
    type: string;
    innerType?: z.ZodType;
    shape?: Record<string, z.ZodType>;
    options?: z.ZodType[];
    element?: z.ZodType;
    valueType?: z.ZodType;
    items?: z.ZodType[];
    getter?: () => z.ZodType;
  };
  switch (def.type) {
    case "nullable":
    case "optional":
    case "default":
      return numbersAt(def.innerType!, pattern);
    case "union":
      return def.options!.flatMap((o) => numbersAt(o, pattern));
    case "pipe":
      return numbersAt((s.def as unknown as { out: z.ZodType }).out, pattern);
  }
  if (pattern.length === 0) return def.type === "number" ? [schema as z.ZodNumber] : [];
  const [head, ...rest] = pattern;
  if (def.type === "object") return def.shape![head!] ? numbersAt(def.shape![head!]!, rest) : [];
  if (def.type === "record" && head === "*") return numbersAt(def.valueType!, rest);
  if (def.type === "array" && head === "*") return numbersAt(def.element!, rest);
  return [];
}

describe("the bounds table", () => {
  it.each(Object.keys(PLAN_BOUNDS))("%s is enforced by the plan schema", (field) => {
    const found = numbersAt(planSchema, field.split("."));
    expect(found.length, `${field} names a number field of the plan`).toBeGreaterThan(0);
    for (const n of found) expect(n.maxValue).toBe(PLAN_BOUNDS[field as BoundedField].max);
  });

  it("leaves the defaults of every block and the stdlib well inside (a clean spec lowers)", () => {
    const dir = workspace({
      "spec.arl":
        'import "std/envs/rooms" as rooms\nexperiment e {\n  policy { model: "builtin:tiny" }\n  env world extends rooms.world {}\n}\n',
    });
    const [p] = lower(path.join(dir, "spec.arl"));
    expect(boundViolations(p!.plan)).toEqual([]);
  });

  it("reports a value beyond its bound at the spec field, and a resolved one at the field it comes from", () => {
    const text = `import "std/envs/rooms" as rooms
experiment e {
  policy { model: "builtin:tiny" }
  env world extends rooms.world {
    tasks: 100000000
  }
  algorithm { group_size: 4096 }
  rollout { tasks_per_batch: 65536 }
  eval { k: [1, 5000] }
}
`;
    const dir = workspace({ "spec.arl": text });
    const errors = new Compiler().check(path.join(dir, "spec.arl")).diagnostics.filter((d) => d.severity === "error");
    const at = (d: (typeof errors)[number]) => [d.code, d.range.start.line, d.message.split(",")[0]];
    expect(errors.map(at).sort()).toEqual(
      [
        ["value-out-of-bounds", 5, "envs.world.tasks is 100000000"],
        // tasks_per_batch x group_size: each within its bound, the batch they make is not.
        ["value-out-of-bounds", 8, "algorithm.batch_size is 268435456"],
        ["value-out-of-bounds", 9, "eval.k.1 is 5000"],
        ["value-out-of-bounds", 9, "eval.samples_per_task is 5000"],
      ].sort(),
    );
    for (const d of errors) expect(d.hint).toMatch(/use at most \d+; the bounds are in src\/plan\/bounds.ts/);
  });
});
