// The plan's tools against the tools a server sends (AgentRL's tool list, OpenEnv's action
// schema), compared at provision: the plan is the contract, so a server whose calls would not
// fit it refuses the run, with both schemas shown (docs/envs.md#declared-tools-and-the-servers).
//
// Compared: each declared tool's name and its parameters' JSON Schema, with what only documents
// a schema left out (description, title, examples, default, $schema) and `required` as a set.
// A server property that the spec does not declare and the server does not require (OpenEnv's
// `metadata`) is left out too: the model never sends it, and the server does not need it. A
// server tool that the plan does not offer is not an error (a harness may offer a subset); it
// is named in the run log.
import { type DeclaredTool, EnvError } from "../../contracts/env.js";

const ANNOTATIONS = new Set(["description", "title", "examples", "default", "$schema", "$comment"]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The schema with annotations removed, keys sorted and `required` sorted (a set). */
function normalised(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(normalised);
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(schema).sort()) {
    if (ANNOTATIONS.has(key)) continue;
    const v = schema[key];
    if (key === "properties" && isObject(v))
      out[key] = Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, normalised(v[k])]),
      );
    else out[key] = key === "required" && Array.isArray(v) ? [...(v as unknown[])].map(String).sort() : normalised(v);
  }
  if (Array.isArray(out.required) && out.required.length === 0) delete out.required;
  return out;
}

/** The server's schema without the optional properties the declared one lacks (top level). */
function withoutUndeclaredOptionals(served: unknown, declared: unknown): unknown {
  if (!isObject(served) || !isObject(served.properties) || !isObject(declared)) return served;
  const declaredProps = isObject(declared.properties) ? declared.properties : {};
  const required = new Set(Array.isArray(served.required) ? served.required.map(String) : []);
  const properties = Object.fromEntries(
    Object.entries(served.properties).filter(([k]) => k in declaredProps || required.has(k)),
  );
  return { ...served, properties };
}

const text = (v: unknown) => JSON.stringify(v);

/**
 * Why the server's tools do not fit the plan's (a message showing both schemas of each tool that
 * differs), or undefined when they fit. `served` maps tool names to parameter schemas.
 */
function toolMismatch(
  envName: string,
  declared: readonly DeclaredTool[],
  served: ReadonlyMap<string, unknown>,
  serverWhere: string,
): string | undefined {
  const problems: string[] = [];
  for (const tool of declared) {
    if (!served.has(tool.name)) {
      problems.push(
        `tool '${tool.name}' is declared but the server has no tool of that name (it has ${[...served.keys()].map((n) => `'${n}'`).join(", ") || "none"})`,
      );
      continue;
    }
    const ours = normalised(tool.parameters);
    const theirs = normalised(withoutUndeclaredOptionals(served.get(tool.name), tool.parameters));
    if (text(ours) !== text(theirs))
      problems.push(
        `tool '${tool.name}' has other parameters than the server's:\n    declared: ${text(ours)}\n    server:   ${text(theirs)}`,
      );
  }
  if (problems.length === 0) return undefined;
  return `env '${envName}': the tools the spec declares do not match those of ${serverWhere} (descriptions and titles aside):\n  ${problems.join("\n  ")}\nFix the spec's tool blocks to the server's schema, or point the env at the server it was written for.`;
}

/** Throws the mismatch as a protocol EnvError (provision refuses the run with it). */
export function requireToolsMatch(
  envName: string,
  declared: readonly DeclaredTool[],
  served: ReadonlyMap<string, unknown>,
  serverWhere: string,
  log: (line: string) => void,
): void {
  const mismatch = toolMismatch(envName, declared, served, serverWhere);
  if (mismatch !== undefined) throw new EnvError(mismatch, "protocol");
  const offered = new Set(declared.map((t) => t.name));
  const extra = [...served.keys()].filter((n) => !offered.has(n));
  if (extra.length > 0)
    log(
      `env '${envName}': ${serverWhere} also has tool ${extra.map((n) => `'${n}'`).join(", ")}, which the plan does not offer the model`,
    );
}
