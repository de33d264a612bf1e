// Whether two runs' task ids name the same tasks. Tasks pair across runs by env name and task
// id, and an id names the same task only where the env is configured alike: ids 0..499 of
// w2-o3-q4 and of w8-o12-q4 are other games. Two runs' envs are alike when every field that can
// change a task is equal (compared as `arl diff` compares plans); the fields below only change
// how a task is scheduled, timed, weighted or shown, so an ablation of them still pairs.
import { diffPlans } from "../plan/diff.js";
import type { JsonObject } from "./load.js";

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

function shown(json: string | undefined): string {
  if (json === undefined) return "absent";
  return json.length > 40 ? `${json.slice(0, 37)}...` : json;
}

/** An env's kind in a plan read as JSON. */
function kindOf(plan: JsonObject, env: string): unknown {
  const envs = plan.envs;
  const config = typeof envs === "object" && envs !== null && !Array.isArray(envs) ? envs[env] : undefined;
  return typeof config === "object" && config !== null && !Array.isArray(config) ? config.kind : undefined;
}

/**
 * The differences between two plans' envs that make a task id name another task, as
 * `env 'quest' world_size 2 vs 8`; empty when every env both plans have is alike.
 */
export function taskDifferences(a: JsonObject, b: JsonObject): string[] {
  const byEnv = new Map<string, string[]>();
  for (const change of diffPlans(a.envs ?? {}, b.envs ?? {})) {
    const [env = "", field] = change.path.split(".");
    // An env only one plan has (a change of the whole env) pairs nothing and is no difference of the shared ones.
    if (field === undefined) continue;
    if (NOT_TASK_FIELDS.has(field)) continue;
    const kind = kindOf(a, env);
    if (kind === kindOf(b, env) && typeof kind === "string" && NOT_TASK_FIELDS_OF_KIND[kind]?.has(field)) continue;
    const fields = byEnv.get(env) ?? [];
    fields.push(`${change.path.slice(env.length + 1)} ${shown(change.before)} vs ${shown(change.after)}`);
    byEnv.set(env, fields);
  }
  return [...byEnv].map(([env, fields]) => `env '${env}' ${fields.join(", ")}`);
}
