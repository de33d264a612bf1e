// Lowering envs: every field explicit, signals sorted, and the data files an env names (sql's
// database and questions, an agent's task file, a dataset's rows and verifier, a swe env's
// requirements) recorded by their
// content hash (lower-data-files.ts), and the user's code behind an agent or gymnasium env
// (lower-code-files.ts). An agent env's `tasks` is its task file's line count, a
// dataset's its row count (lower-dataset.ts).
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { VariantModel } from "../semantics/analyze.js";
import type { Env } from "../semantics/schema/env.js";
import { agentCommandProblem, stdlibTaskSchema } from "../contracts/agent-command.js";
import { jsonObjectLines } from "../contracts/json-lines.js";
import { sandboxSupport } from "../contracts/sandbox.js";
import { taskLineProblem } from "./agent-task-lines.js";
import { envCodeFiles } from "./lower-code-files.js";
import { dataFile, originOf, readDataText } from "./lower-data-files.js";
import { type LoweringContext, sortedRecord } from "./lower-context.js";
import { lowerDatasetEnv } from "./lower-dataset.js";
import { hostLibraryOf, lowerHostEnv } from "./lower-host-env.js";
import type { PlanEnv } from "./schema.js";
import type { CompilerCode } from "../diagnostics/codes/index.js";

export function lowerEnv(
  name: string,
  env: Env,
  variant: VariantModel,
  context: LoweringContext,
  diagnostics: Diagnostic[],
): PlanEnv {
  const { tool: _tool, signals, description, kind, ...rest } = env;
  const common = {
    kind,
    description: description ?? null,
    ...rest,
    signals: sortedRecord(new Map(Object.entries(signals)), (s) => ({
      scope: s.scope,
      type: s.type,
      min: s.min ?? null,
      max: s.max ?? null,
      violation: s.violation,
    })),
  };
  if (env.kind === "agent" || env.kind === "subprocess") checkSandbox(name, env, variant, diagnostics);
  if (common.kind === "agent")
    return withCode(name, env, lowerAgentEnv(name, env, common, variant, context, diagnostics), variant, context);
  if (env.kind === "dataset") return lowerDatasetEnv(name, env, common, variant, context, diagnostics);
  if (env.kind === "agentrl" || env.kind === "openenv") checkServerEnv(name, env, variant, diagnostics);
  const library = hostLibraryOf(env.kind);
  if (library)
    return withCode(
      name,
      env,
      lowerHostEnv(name, env, library, common, variant, context, diagnostics),
      variant,
      context,
    );
  if (env.kind === "swe")
    return {
      ...common,
      requirements:
        env.requirements === null
          ? null
          : dataFile(env.requirements, ["env", name, "requirements"], variant, context, diagnostics),
    } as PlanEnv;
  if (common.kind !== "sql") return common as PlanEnv;
  const sql = common as typeof common & { kind: "sql"; database: string | null; questions: string | null };
  return {
    ...sql,
    database:
      sql.database === null ? null : dataFile(sql.database, ["env", name, "database"], variant, context, diagnostics),
    questions:
      sql.questions === null
        ? null
        : dataFile(sql.questions, ["env", name, "questions"], variant, context, diagnostics),
  } as PlanEnv;
}

/** The env with the user's code behind it hashed (`code`, lower-code-files.ts), when it names any. */
function withCode(name: string, env: Env, lowered: PlanEnv, variant: VariantModel, context: LoweringContext): PlanEnv {
  const code = envCodeFiles(name, env, variant, context);
  return code ? ({ ...lowered, code } as PlanEnv) : lowered;
}

/** Warns where this machine cannot sandbox the env's episodes (docs/envs.md#what-an-episode-can-reach). */
function checkSandbox(
  name: string,
  env: Extract<Env, { kind: "agent" | "subprocess" }>,
  variant: VariantModel,
  diagnostics: Diagnostic[],
): void {
  if (env.sandbox.mode === "off") return;
  const support = sandboxSupport();
  if ("bwrap" in support) return;
  const written = variant.valuesByPath.has(["env", name, "sandbox"]);
  const origin = originOf(written ? ["env", name, "sandbox"] : ["env", name], variant);
  const then =
    env.sandbox.mode === "required"
      ? "`arl run` refuses to run it here (sandbox { mode: required })"
      : "its episodes run unisolated: each can read the others' processes and keys, your files and the network";
  diagnostics.push({
    code: "sandbox-unavailable",
    severity: "warning",
    message: `env '${name}' is not isolated on this machine: ${support.problem}; ${then}`,
    file: origin.file,
    range: origin.range,
    hint: "install bubblewrap (Debian/Ubuntu: apt install bubblewrap) where user namespaces are allowed; or write sandbox { mode: off } to accept running unisolated",
  });
}

/**
 * An agent env: its task file hashed, `tasks` its count of non-blank lines (each a JSON object;
 * a smaller `tasks` written in the spec uses the first ones), and no tools of its own (the
 * program brings them).
 */
function lowerAgentEnv(
  name: string,
  env: Env,
  common: Record<string, unknown>,
  variant: VariantModel,
  context: LoweringContext,
  diagnostics: Diagnostic[],
): PlanEnv {
  if (env.kind !== "agent") throw new Error("not an agent env");
  const report = (code: CompilerCode, at: string[], message: string, hint: string) => {
    const origin = originOf(at, variant);
    diagnostics.push({ code, severity: "error", message, file: origin.file, range: origin.range, hint });
  };
  if (Object.keys(env.tool).length > 0) {
    report(
      "agent-env-tools",
      ["env", name, "tool", Object.keys(env.tool)[0] ?? ""],
      `env '${name}' is of kind agent and declares tool ${Object.keys(env.tool)
        .map((t) => `'${t}'`)
        .join(", ")}: an agent program brings its own tools and runs them itself`,
      "remove the tool blocks; the program's tools are whatever it sends in its chat requests (docs/gateway.md#agent-programs)",
    );
  }
  env.command.forEach((word, i) => {
    const problem = agentCommandProblem(word, i === 0);
    if (problem)
      report(
        "agent-command-word",
        ["env", name, "command"],
        `env '${name}': the command's word ${problem.message}`,
        problem.hint,
      );
  });
  const at = ["env", name, "task_file"];
  const taskFile = dataFile(env.task_file, at, variant, context, diagnostics);
  const read = taskLines(env.task_file, at, variant, context);
  let tasks = env.tasks;
  if (typeof read === "string")
    report(
      "agent-task-file-invalid",
      at,
      `env '${name}': the task file '${env.task_file}' ${read}`,
      'write one task a line as a JSON object, e.g. {"question": "..."}',
    );
  else if (read !== undefined) {
    const lines = read.objects.length;
    const typed = stdlibTaskSchema(env.command);
    const misfit = typed && taskLineProblem(typed.schema, read.objects, read.lines);
    if (typed && misfit) {
      const properties = typed.schema.properties;
      const fields = typeof properties === "object" && properties !== null ? Object.keys(properties).join(", ") : "";
      report(
        "agent-task-invalid",
        at,
        `env '${name}': line ${misfit.line} of the task file '${env.task_file}' is not a task ${typed.program} reads: ${misfit.problem}`,
        `its task lines have the fields ${fields} (the program's .task.schema.json, beside it in the stdlib)`,
      );
    }
    const written = variant.valuesByPath.has(["env", name, "tasks"]);
    if (written && env.tasks > lines) {
      report(
        "agent-tasks-beyond-file",
        ["env", name, "tasks"],
        `env '${name}': tasks is ${env.tasks}, but the task file '${env.task_file}' has ${lines} task${lines === 1 ? "" : "s"}`,
        `remove tasks (it is the file's line count, ${lines}), or write at most ${lines}`,
      );
    } else if (!written) tasks = lines;
  }
  return { ...common, tasks, task_file: taskFile } as PlanEnv;
}

/**
 * What an AgentRL or OpenEnv env needs to be runnable, known without its server: a controller
 * routes by task name; an OpenEnv action is one tool (its parameters the action's fields).
 */
function checkServerEnv(
  name: string,
  env: Extract<Env, { kind: "agentrl" | "openenv" }>,
  variant: VariantModel,
  diagnostics: Diagnostic[],
): void {
  const report = (code: CompilerCode, at: string[], message: string, hint: string) => {
    const origin = originOf(at, variant);
    diagnostics.push({ code, severity: "error", message, file: origin.file, range: origin.range, hint });
  };
  if (env.kind === "agentrl" && env.mode === "controller" && env.task === null) {
    report(
      "agentrl-controller-task",
      ["env", name, "mode"],
      `env '${name}' talks to an AgentRL controller, which serves many tasks, but names none`,
      'write the task\'s name as the controller knows it, e.g. task: "os-std"',
    );
  }
  const tools = Object.keys(env.tool);
  if (env.kind === "openenv" && tools.length !== 1) {
    report(
      "openenv-tools",
      tools.length === 0 ? ["env", name, "kind"] : ["env", name, "tool", tools[1] ?? ""],
      `env '${name}' is of kind openenv and declares ${tools.length === 0 ? "no tool" : `${tools.length} tools (${tools.map((t) => `'${t}'`).join(", ")})`}: an OpenEnv server takes one kind of action`,
      "declare one tool whose parameters are the action's fields, as the server's /schema gives them (docs/envs.md#kind-openenv)",
    );
  }
}

/** The task file's objects (one a non-blank line) and their file lines; a string says what is wrong with it; undefined: unreadable (dataFile reported it). */
function taskLines(
  written: string,
  at: readonly string[],
  variant: VariantModel,
  context: LoweringContext,
): { objects: readonly unknown[]; lines: readonly number[] } | string | undefined {
  const text = readDataText(written, at, variant, context);
  if (text === undefined) return undefined;
  const read = jsonObjectLines(text);
  if ("problem" in read) return `has a line that is ${read.problem} (line ${read.line})`;
  return read.objects.length === 0 ? "has no task (no non-blank line)" : read;
}
