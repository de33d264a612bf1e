// How the offered tools are shown to the model: described in the system prompt (text actions, or
// templates that do not render tools), or handed to a template that renders them as OpenAI
// function definitions. Both show the same parameters, keys sorted. The plan's tools (the
// harness) and a harness's own function definitions (the agent gateway) go through the same
// describer, so a model is shown tools the same way on both paths.
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
  return describeFunctions(toolDefinitions(tools));
}

interface FunctionDefinition {
  readonly type?: unknown;
  readonly function?: { readonly name?: unknown; readonly description?: unknown; readonly parameters?: unknown };
}

/**
 * OpenAI function definitions described one a line as JSON (`{"type", "function": {"name",
 * "description", "parameters"}}`, the parameters' keys sorted); a field the definition leaves
 * out is left out.
 */
export function describeFunctions(definitions: readonly unknown[]): string {
  return definitions
    .map((d) => {
      const def = d as FunctionDefinition;
      const fn = def.function ?? {};
      return JSON.stringify({
        type: def.type ?? "function",
        function: {
          name: fn.name,
          description: fn.description,
          parameters: fn.parameters === undefined ? undefined : sortedKeysDeep(fn.parameters),
        },
      });
    })
    .join("\n");
}

/** The system message's text with the tools described after it (the system prompt first, when there is one). */
export function systemWithTools(system: string | null, description: string): string {
  return [system ?? "", description ? `Tools:\n${description}` : ""].filter(Boolean).join("\n\n");
}

/**
 * A JSON value with every object's keys sorted: the order the plan is written in. A plan read
 * back through the plan schema (resume, `arl run plan.json`) has the schema's key order instead,
 * and the model must be shown the same text as in the run that wrote the plan.
 */
function sortedKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeysDeep);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sortedKeysDeep((value as Record<string, unknown>)[k])]),
  );
}

/** The offered tools as OpenAI function definitions, for a template that renders them (keys sorted, as describeTools shows them). */
export function toolDefinitions(tools: readonly PlanTool[]): unknown[] {
  return tools.map((t) => ({
    type: t.definition.type,
    function: {
      name: t.definition.function.name,
      description: t.definition.function.description,
      parameters: sortedKeysDeep(t.definition.function.parameters),
    },
  }));
}
