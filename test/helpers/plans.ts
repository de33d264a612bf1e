// Compiling small specs to plans for runtime tests.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Compiler } from "../../src/compiler.js";
import { lowerModel } from "../../src/plan/lower.js";
import type { Plan } from "../../src/plan/schema.js";

export function compilePlans(spec: string): Plan[] {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-plan-"));
  const file = path.join(dir, "spec.arl");
  writeFileSync(file, spec);
  const result = new Compiler().check(file);
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0 || !result.model) throw new Error(`spec does not compile:\n${errors.map((e) => `${e.range.start.line}: ${e.message}`).join("\n")}`);
  return lowerModel(result.model).plans.map((p) => p.plan);
}

/** A one-env experiment around a "counter" env whose tools are `step` and `write`. */
export function counterSpec(body: string): string {
  return `
experiment counter_test {
  policy { model: "builtin:tiny", sampling { max_new_tokens: 64 } }
  env counter {
    kind: subprocess
    command: ["counter-env"]
    signals {
      progress { scope: state, type: number, min: 0, max: 1 }
      success { scope: outcome, type: bool }
    }
    tool step { description: "advance the counter" }
    tool write {
      description: "write a value"
      parameters { value { type: string, enum: ["a", "b"] } }
    }
  }
  reward { success: outcome.success }
  ${body}
}
`;
}
