// How the offered tools are shown to the model: described in the system prompt by the harness
// (text actions, or templates that do not render tools), or handed to a template that renders
// them as OpenAI function definitions. Both show the same parameters, keys sorted.
import type { Plan, PlanTool } from "../plan/schema.js";

/** The tools as the system prompt describes them. */
export function describeTools(tools: readonly PlanTool[], format: Plan["harness"]["format"]): string {
  if (format === "text_action") {
    return tools
      .map((t) => {
        const params = Object.keys((t.definition.function.parameters.properties as object | undefined) ?? {});
        return `${[t.name, ...params.map((p) => `<${p}>`)].join(" ")}: ${t.definition.function.description}`;
      })
      .join("\n");
  }
  return tools
    .map((t) => {
      const fn = t.definition.function;
      return JSON.stringify({ type: t.definition.type, function: { name: fn.name, description: fn.description, parameters: sortedKeysDeep(fn.parameters) } });
    })
    .join("\n");
}

/**
 * A JSON value with every object's keys sorted: the order the plan is written in. A plan read
 * back through the plan schema (resume, `arl run plan.json`) has the schema's key order instead,
 * and the model must be shown the same text as in the run that wrote the plan.
 */
function sortedKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeysDeep);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortedKeysDeep((value as Record<string, unknown>)[k])]));
}

/** The offered tools as OpenAI function definitions, for a template that renders them (keys sorted, as describeTools shows them). */
export function toolDefinitions(tools: readonly PlanTool[]): unknown[] {
  return tools.map((t) => ({ type: t.definition.type, function: { name: t.definition.function.name, description: t.definition.function.description, parameters: sortedKeysDeep(t.definition.function.parameters) } }));
}
