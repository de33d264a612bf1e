// Lowering tools: the order the model sees them in, each one's time limit, and parameter
// schemas in a canonical key order.
import type { ResolvedTool } from "../semantics/analyze.js";
import type { ExperimentConfig } from "../semantics/schema/experiment.js";
import { sortedKeys } from "./canonical.js";
import type { PlanTool } from "./schema.js";

const byEnvThenName = (a: ResolvedTool, b: ResolvedTool) =>
  (a.env ?? "") < (b.env ?? "")
    ? -1
    : (a.env ?? "") > (b.env ?? "")
      ? 1
      : a.name < b.name
        ? -1
        : a.name > b.name
          ? 1
          : 0;

/**
 * The order the model sees the tools in: an explicit list keeps its order; a whole env's set
 * (`bank.tools`, or every env's when the harness names none) is sorted by name, so that
 * reordering declarations does not change the plan.
 */
export function orderTools(config: ExperimentConfig, tools: readonly ResolvedTool[]): ResolvedTool[] {
  const refs = config.harness.tools;
  if (refs === null) return [...tools].sort(byEnvThenName);
  const out: ResolvedTool[] = [];
  let i = 0;
  for (const ref of Array.isArray(refs) ? refs : [refs]) {
    const [first, second] = ref.$name;
    const env = first !== undefined && second === "tools" && ref.$name.length === 2 ? config.env[first] : undefined;
    const n = env ? Object.keys(env.tool).length : 1;
    out.push(...tools.slice(i, i + n).sort(byEnvThenName));
    i += n;
  }
  return i === tools.length ? out : [...tools]; // resolution already reported a problem
}

export function lowerTool(tool: ResolvedTool, harnessTimeout: number): PlanTool {
  // A tool's own time limit wins when it sets one; otherwise the harness's default applies.
  const timeout_s = tool.definition.timeout_s ?? harnessTimeout;
  const fn = tool.schema.function;
  return {
    name: tool.name,
    env: tool.env,
    timeout_s,
    definition: {
      type: "function",
      function: {
        name: fn.name,
        description: fn.description,
        parameters: normaliseSchema(fn.parameters) as PlanTool["definition"]["function"]["parameters"],
      },
    },
  };
}

/**
 * Parameter schemas with their keys sorted and `required` (a set) sorted, so that the order
 * parameters were declared in changes neither the hash nor the plan's bytes.
 */
function normaliseSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(normaliseSchema);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const k of sortedKeys(schema)) {
    const v = (schema as Record<string, unknown>)[k];
    out[k] = k === "required" && Array.isArray(v) ? [...(v as string[])].sort() : normaliseSchema(v);
  }
  return out;
}
