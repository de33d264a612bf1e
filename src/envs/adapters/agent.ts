// The `agent` env kind: an external program that owns its loop and calls the model through the
// run's gateway (docs/gateway.md#agent-programs). Its episodes are played by the runtime
// (src/runtime/run/agent-episode.ts), not through reset/step, so `create` refuses; this module
// reads the task file (one JSON object a line, task N = the N-th non-blank line, the rule
// lowering counts `tasks` by) and gives the embedded model's tokenizer the tasks' words.
import { readFileSync } from "node:fs";
import { EnvError, type EnvKind } from "../../contracts/env.js";
import { jsonObjectLines } from "../../contracts/json-lines.js";
import type { PlanEnv } from "../../plan/schema.js";
import { verifyDataFile } from "../data-files.js";
import { sandboxHostCheck } from "../../contracts/sandbox.js";

export type AgentEnv = Extract<PlanEnv, { kind: "agent" }>;

/** A task of the task file: its JSON object as written. */
export type AgentTask = Readonly<Record<string, unknown>>;

const loaded = new Map<string, { sha256: string; tasks: readonly AgentTask[] }>();

/**
 * The env's tasks, below the run's data root (confined, sha256 checked against the plan's);
 * the first `env.tasks` lines. A missing or changed file is an EnvError naming it.
 */
export function agentTasks(env: AgentEnv, root: string | undefined): readonly AgentTask[] {
  const absolute = verifyDataFile(env.task_file, root, "task", "agent");
  const known = loaded.get(absolute);
  if (known && known.sha256 === env.task_file.sha256) return known.tasks.slice(0, env.tasks);
  const read = jsonObjectLines(readFileSync(absolute, "utf8"));
  if ("problem" in read)
    throw new EnvError(
      `agent env: line ${read.line} of the task file '${env.task_file.path}' is ${read.problem}`,
      "protocol",
    );
  const tasks = read.objects;
  if (tasks.length < env.tasks)
    throw new EnvError(
      `agent env: the task file '${env.task_file.path}' has ${tasks.length} tasks, but the plan declares tasks: ${env.tasks}`,
      "protocol",
    );
  loaded.set(absolute, { sha256: env.task_file.sha256, tasks });
  return tasks.slice(0, env.tasks);
}

const WORDS = /[A-Za-z0-9_]+|[^\sA-Za-z0-9_]/g;

/**
 * Words the gateway itself writes into contexts: OpenAI function definitions as the tool
 * descriptions lay them out, and their JSON Schema words. A program's own prompt is its own.
 */
const AGENT_TEXTS = [
  '{"type":"function","function":{"name":"","description":"","parameters":{"properties":{},"required":[],"type":"object"}}}',
  "string integer number boolean array enum items Tools: tool_call tool_calls arguments content assistant user system",
];
/** The `agent` env kind; `root` is the run's data root, where the task file lies. */
export function createAgentEnv(options: { readonly root?: string } = {}): EnvKind<AgentEnv> {
  return {
    kind: "agent",
    create(env) {
      return Promise.reject(
        new EnvError(
          `agent env: the episodes of an agent program are played by the runtime (its gateway), not through reset/step; '${env.command.join(" ")}' cannot be stepped`,
          "protocol",
        ),
      );
    },
    hostCheck(env) {
      return Promise.resolve(sandboxHostCheck(env.sandbox));
    },
    // The embedded model spells a word it lacks as bytes, so this is a head start, not a limit.
    vocabulary(env) {
      const words = new Set<string>(AGENT_TEXTS.flatMap((t) => t.match(WORDS) ?? []));
      for (const task of agentTasks(env, options.root))
        for (const w of JSON.stringify(task).match(WORDS) ?? []) words.add(w);
      return [...words].sort();
    },
  };
}

/** The registered `agent` env: no data root, so its task file cannot be found (see `envKindsWithDataRoot`). */
export const agentEnv = createAgentEnv();
