// Whether two runs' task ids name the same tasks. Tasks pair across runs by env name and task
// id, and an id names the same task only where the env is configured alike: ids 0..499 of
// w2-o3-q4 and of w8-o12-q4 are other games. Two runs' envs are alike when every field that can
// change a task is equal; the fields below only change how a task is scheduled, timed, weighted
// or shown, so an ablation of them still pairs.
import type { Json, JsonObject } from "./load.js";

/** Env fields (any kind) that leave every task id naming the same task. */
const NOT_TASK_FIELDS: ReadonlySet<string> = new Set([
  "description",
  "tasks",
  "split",
  "weight",
  "signals",
  "optimal_steps",
  "budget_is_task_rule",
  "reward_range",
  "timeout_s",
  "prepare_timeout_s",
  "retries",
  "max_response_bytes",
  "max_sessions",
  "action_tool",
  "observation_field",
  "admissible_commands",
]);

/** Fields of one kind that leave its tasks as they are: an agent kind's program is the policy's harness, not the task. */
const NOT_TASK_FIELDS_OF_KIND: Readonly<Record<string, ReadonlySet<string>>> = {
  agent: new Set(["command"]),
};

function isObject(x: Json | undefined): x is JsonObject {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** JSON with object keys sorted, so that equal values compare equal as text. */
function canonical(x: Json | undefined): string {
  if (x === undefined) return "undefined";
  if (Array.isArray(x)) return `[${x.map(canonical).join(",")}]`;
  if (isObject(x))
    return `{${Object.keys(x)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(x[k])}`)
      .join(",")}}`;
  return JSON.stringify(x);
}

function shown(x: Json | undefined): string {
  const text = x === undefined ? "absent" : canonical(x);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/**
 * The differences between two plans' envs that make a task id name another task, as
 * `env 'quest' world_size 2 vs 8`; empty when every env both plans have is alike.
 */
export function taskDifferences(a: JsonObject, b: JsonObject): string[] {
  const envsA = isObject(a.envs) ? a.envs : {};
  const envsB = isObject(b.envs) ? b.envs : {};
  const out: string[] = [];
  for (const name of Object.keys(envsA).filter((n) => n in envsB)) {
    const ea = envsA[name];
    const eb = envsB[name];
    if (!isObject(ea) || !isObject(eb)) continue;
    const kindSkips = typeof ea.kind === "string" ? NOT_TASK_FIELDS_OF_KIND[ea.kind] : undefined;
    const fields = [...new Set([...Object.keys(ea), ...Object.keys(eb)])].filter(
      (f) => !NOT_TASK_FIELDS.has(f) && !(ea.kind === eb.kind && kindSkips?.has(f)),
    );
    const differing = fields.filter((f) => canonical(ea[f]) !== canonical(eb[f]));
    if (differing.length > 0)
      out.push(`env '${name}' ${differing.map((f) => `${f} ${shown(ea[f])} vs ${shown(eb[f])}`).join(", ")}`);
  }
  return out;
}
