// The dataset rows veRL reads (RLHFDataset: `data_source`, `prompt` as a chat list,
// `reward_model.ground_truth`, `extra_info`, and `agent_name` for the agent loop), one row per
// task of the plan's train and eval splits. The prompt is what ARL's harness shows first: the
// system text with the tools described (when the template does not render them) and the env's
// reset observation. Envs that run inside ARL (rooms, findmax) are reset here; an HTTP task
// server is reset by prepare_data.py at the user's site (its observation is not known here).
import type { EnvKind } from "../../contracts/env.js";
import { deriveSeed } from "../../contracts/random.js";
import type { Plan, PlanEnv } from "../../plan/schema.js";
import { splitTasks, type Split } from "../../plan/splits.js";
import { toolsFor } from "../../episode/harness.js";
import { describeTools, systemWithTools } from "../../episode/tool-descriptions.js";
import { type Finding } from "./findings.js";

export interface ChatMessage {
  readonly role: "system" | "user";
  readonly content: string;
}

export interface DataRow {
  readonly data_source: string;
  /** null: prepare_data.py fills it in from the HTTP env's reset. */
  readonly prompt: ChatMessage[] | null;
  readonly reward_model: { readonly style: "rule"; readonly ground_truth: string };
  readonly agent_name: string;
  readonly extra_info: {
    readonly env: string;
    readonly task: number;
    readonly split: Split;
    readonly seed: number;
    readonly system: string | null;
    /** The env's tools: prepare_data.py gives each the reset request (tools_kwargs). */
    readonly tools: string[];
    /** The HTTP env's reset request, for prepare_data.py and the env tool. */
    readonly reset: {
      readonly url: string;
      readonly task: string | null;
      readonly index: number;
      readonly seed: number;
    } | null;
  };
}

export interface ExportedData {
  readonly train: DataRow[];
  readonly val: DataRow[];
  readonly findings: Finding[];
}

const LOCAL_KINDS = new Set(["rooms", "findmax"]);

/** The seed of a task's exported episode: fixed per env and task, so prepare and the tool agree. */
function taskSeed(plan: Plan, env: string, task: number): number {
  return deriveSeed(plan.seed, "verl-export", env, task);
}

/** The system message ARL's harness writes for this env's tools (describeTools: the template renders none by default). */
function systemText(plan: Plan, env: string): string | null {
  const tools = toolsFor(plan, env);
  const text = systemWithTools(
    plan.harness.system_prompt,
    tools.length > 0 ? describeTools(tools, plan.harness.format) : "",
  );
  return text === "" ? null : text;
}

async function row(
  plan: Plan,
  kinds: ReadonlyMap<string, EnvKind>,
  name: string,
  env: PlanEnv,
  task: number,
  split: Split,
): Promise<DataRow> {
  const seed = taskSeed(plan, name, task);
  const system = systemText(plan, name);
  let prompt: ChatMessage[] | null = null;
  const kind = kinds.get(env.kind);
  if (LOCAL_KINDS.has(env.kind) && kind) {
    const instance = await kind.create(env, task, seed);
    try {
      const start = await instance.reset();
      prompt = [
        ...(system ? [{ role: "system" as const, content: system }] : []),
        { role: "user", content: start.text },
      ];
    } finally {
      await instance.close();
    }
  }
  const reset = env.kind === "http" ? { url: env.url, task: env.task, index: task, seed } : null;
  return {
    data_source: name,
    prompt,
    reward_model: { style: "rule", ground_truth: "" },
    agent_name: plan.tools.length > 0 ? "tool_agent" : "single_turn_agent",
    extra_info: { env: name, task, split, seed, system, tools: toolsFor(plan, name).map((t) => t.name), reset },
  };
}

/** Rows of one split over every env, in env-name then task order. */
async function rows(plan: Plan, kinds: ReadonlyMap<string, EnvKind>, split: Split): Promise<DataRow[]> {
  const out: DataRow[] = [];
  for (const name of Object.keys(plan.envs).sort()) {
    const env = plan.envs[name] as PlanEnv;
    if (!LOCAL_KINDS.has(env.kind) && env.kind !== "http") continue;
    for (const task of splitTasks(name, env, split)) out.push(await row(plan, kinds, name, env, task, split));
  }
  return out;
}

/** `rows: false`: the findings only (arl export --config-only), no env is reset. */
export async function exportData(
  plan: Plan,
  kinds: ReadonlyMap<string, EnvKind>,
  options: { rows: boolean } = { rows: true },
): Promise<ExportedData> {
  const findings: Finding[] = [];
  for (const [name, env] of Object.entries(plan.envs)) {
    if (!LOCAL_KINDS.has(env.kind) && env.kind !== "http") {
      findings.push({
        setting: `envs.${name}.kind`,
        arl: JSON.stringify(env.kind),
        verl: "no rows: the export renders prompts of rooms and findmax envs and of HTTP task servers only",
        consequence: `env ${name} is left out of the data`,
        handling: "refused",
      });
    }
    if (plan.envs[name]?.weight !== 1 && Object.keys(plan.envs).length > 1) {
      findings.push({
        setting: `envs.${name}.weight`,
        arl: String(env.weight),
        verl: "tasks are drawn uniformly from the parquet rows",
        consequence: "envs are mixed by their task counts, not their weights",
        handling: "differs",
      });
    }
  }
  if (!options.rows) return { train: [], val: [], findings };
  const train = await rows(plan, kinds, "train");
  const val = await rows(plan, kinds, plan.eval.split);
  if (plan.eval.tasks !== null && plan.eval.tasks < val.length) {
    findings.push({
      setting: "eval.tasks",
      arl: String(plan.eval.tasks),
      verl: "validation runs every row of val_files",
      consequence: `the exported val file keeps the first ${plan.eval.tasks} rows`,
      handling: "exact",
    });
    val.splice(plan.eval.tasks);
  }
  return { train, val, findings };
}

/** Tokens a chat template adds around one message, at most (role markers, separators). */
const TEMPLATE_TOKENS_PER_MESSAGE = 16;

/**
 * A bound on the tokens of the rows' first prompts: their characters (no tokenizer gives a
 * text more tokens than characters) plus the template's markers. Rows whose prompt the HTTP
 * server gives at prepare time count their system text and the observation budget.
 */
export function promptTokenBound(plan: Plan, data: readonly DataRow[]): number {
  const bound = (r: DataRow) =>
    r.prompt === null
      ? (r.extra_info.system?.length ?? 0) + plan.harness.observation.max_tokens + 2 * TEMPLATE_TOKENS_PER_MESSAGE
      : r.prompt.reduce((n, m) => n + m.content.length + TEMPLATE_TOKENS_PER_MESSAGE, 0);
  const envs = Object.keys(plan.envs).map(
    (name) =>
      (systemText(plan, name)?.length ?? 0) + plan.harness.observation.max_tokens + 2 * TEMPLATE_TOKENS_PER_MESSAGE,
  );
  return Math.max(...(data.length > 0 ? data.map(bound) : envs));
}

/** Rows as JSON lines: prepare_data.py turns them into parquet. */
export function jsonLines(data: readonly DataRow[]): string {
  return data.map((r) => `${JSON.stringify(r)}\n`).join("");
}
