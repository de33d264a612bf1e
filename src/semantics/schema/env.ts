// `env NAME { kind: ..., ... }`: the common fields of every environment, and the parameters of
// each kind (the built-in ones the runtime implements, and external task servers). This is the
// one declaration of env configuration: the plan's env schema (src/plan/env-schema.ts) is
// derived from `envKindShapes`, field by field and in this order.
import * as z from "zod";
import { doc, enumOf, isPlainName, nonNegativeInt, positiveInt, probability } from "./common.js";
import { toolSchema } from "./tool.js";
import { hostLibraries } from "../../contracts/libraries/index.js";
import { hostCommonKnobs, type HostLibrary } from "../../contracts/libraries/library.js";

export const signalScopes = ["outcome", "state"] as const;
export const signalTypes = ["bool", "number", "count"] as const;

export const signalSchema = z.strictObject({
  scope: doc(enumOf(signalScopes), "outcome: known at the end of the episode; state: known after every step."),
  type: doc(
    enumOf(signalTypes, { boolean: "bool", float: "number", double: "number", int: "count", integer: "count" }),
    "bool is 0/1 in arithmetic; count is a non-negative integer.",
  ),
  min: doc(z.number().optional(), "Smallest value the env reports."),
  max: doc(z.number().optional(), "Largest value the env reports."),
  violation: doc(
    z.boolean().default(false),
    "The signal reports a rule violation: block it with `constraints`, do not penalise it.",
  ),
});

export type Signal = z.output<typeof signalSchema>;

const splitSchema = z
  .strictObject({
    train: doc(probability.default(0.8), "Fraction of the tasks used for training."),
    valid: doc(probability.default(0), "Fraction held out to choose settings and checkpoints."),
    test: doc(probability.default(0.2), "Fraction held out for the final evaluation only."),
  })
  .refine((s) => s.train + s.valid + s.test <= 1 + 1e-9, {
    message: "the split fractions add up to more than 1, so splits would share tasks",
  });

const common = {
  description: doc(z.string().optional(), "What the environment is."),
  version: doc(z.string().default("1"), "Version of the task set; recorded in the plan and the run manifest."),
  tasks: doc(positiveInt.default(1000), "How many tasks the env generates or serves (task ids 0..tasks-1)."),
  split: doc(splitSchema.default(splitSchema.parse({})), "Disjoint train/valid/test splits, by task."),
  weight: doc(z.number().positive().default(1), "Mixing weight of this env in a multi-task batch."),
  signals: doc(
    z.record(z.string(), signalSchema).default({}),
    "Typed signals the env exposes to rewards and constraints.",
  ),
  tool: doc(z.record(z.string(), toolSchema).default({}), "Tools the env provides, by name."),
  optimal_steps: doc(
    positiveInt.nullable().default(null),
    "Length of an optimal solution, where known (e.g. from a solver).",
  ),
  budget_is_task_rule: doc(
    z.boolean().default(false),
    "The turn budget is part of the task's rules (running out is a real end), not only a collection limit.",
  ),
  reward_range: doc(z.tuple([z.number(), z.number()]).default([0, 1]), "Range the env's own reward is mapped to."),
};

const rooms = z.strictObject({
  ...common,
  kind: z.literal("rooms"),
  rooms: doc(positiveInt.default(2), "Number of rooms (TextWorld's world size)."),
  objects: doc(nonNegativeInt.default(3), "Number of objects placed in the world."),
  quest_length: doc(positiveInt.default(4), "Actions in the shortest walkthrough of the quest."),
});

/** The functions a `findmax` task can seed its bug into. */
export const findmaxFunctions = ["find_max", "find_min", "sum", "index_of", "count_if", "reverse"] as const;

const findmax = z.strictObject({
  ...common,
  kind: z.literal("findmax"),
  functions: doc(
    z.array(enumOf(findmaxFunctions)).default(["find_max", "find_min", "sum", "index_of"]),
    "The family of functions to repair; each task seeds one bug into one of them.",
  ),
  visible_tests: doc(positiveInt.default(3), "Tests the agent can run."),
  hidden_tests: doc(positiveInt.default(8), "Tests that decide the outcome, with inputs unlike the visible ones."),
  time_limit_ms: doc(positiveInt.default(2000), "Time limit of one test run of the candidate code."),
  memory_limit_mb: doc(positiveInt.default(128), "Memory limit of the candidate code's process."),
  require_namespaces: doc(
    z.boolean().default(true),
    "Refuse to run where the sandbox has no mount and PID namespaces (bubblewrap, or unshare with user namespaces): without them, code that escaped the vm could connect to unix sockets by path and signal your processes. false: run with the other layers, warned at run start.",
  ),
});

const sql = z.strictObject({
  ...common,
  kind: z.literal("sql"),
  database: doc(
    z.string().nullable().default(null),
    "Path of the SQLite database; none uses the generated demo database.",
  ),
  questions: doc(
    z.string().nullable().default(null),
    "Path of the questions (JSON lines); none uses the generated demo questions.",
  ),
  read_only: doc(z.boolean().default(true), "Open the database read-only."),
  max_rows: doc(positiveInt.default(50), "Rows of a result shown in an observation."),
});

const external = {
  timeout_s: doc(z.number().positive().default(60), "Time limit of one reset or step."),
  retries: doc(nonNegativeInt.default(2), "Retries of a failed call before the episode is an env error."),
  task: doc(z.string().nullable().default(null), "Task name on the server."),
};

const http = z.strictObject({
  ...common,
  ...external,
  kind: z.literal("http"),
  url: doc(z.string().min(1), "Base URL of the task server (reset, step, close)."),
  max_response_bytes: doc(
    positiveInt.default(8 * 1024 * 1024),
    "Largest answer body accepted from the server, in bytes; a larger one is a protocol error (read no further than this).",
  ),
});

/** Whether an episode runs in the sandbox (docs/envs.md#what-an-episode-can-reach). */
export const sandboxModes = ["auto", "required", "off"] as const;

/** The per-episode sandbox of a program the runtime starts (agent, subprocess): bubblewrap and its limits. */
const sandboxSchema = z.strictObject({
  mode: doc(
    enumOf(sandboxModes).default("auto"),
    "auto: each episode in its own bubblewrap sandbox where bubblewrap works, else unisolated and warned; required: refuse to run without it; off: no sandbox (the program sees what you see).",
  ),
  network: doc(
    z.boolean().default(false),
    "Keep the host's network (false: only the run's gateway is reachable, through the sandbox's own loopback).",
  ),
  cpu_s: doc(
    positiveInt.default(600),
    "CPU seconds each process of the episode may use (RLIMIT_CPU); past it the process is killed and the episode is an env error.",
  ),
  memory_mb: doc(
    positiveInt.default(8192),
    "Heap and private writable memory of each process of the episode, in MiB (RLIMIT_DATA).",
  ),
  processes: doc(
    positiveInt.default(512),
    "Processes the episode may run at once (RLIMIT_NPROC in its own user namespace; as root, which that rlimit does not bind, a pids cgroup where root can make one).",
  ),
  disk_mb: doc(
    positiveInt.default(1024),
    "Size of the episode's writable /tmp (its workspace and HOME), in MiB; also the largest file it may write.",
  ),
  output_bytes: doc(
    positiveInt.default(64 * 1024 * 1024),
    "Bytes the program may write to stdout and stderr together; past it the episode is stopped as an env error.",
  ),
});

const subprocess = z.strictObject({
  ...common,
  ...external,
  kind: z.literal("subprocess"),
  command: doc(z.array(z.string()).min(1), "Program and arguments; the env speaks JSON lines on stdin/stdout."),
  sandbox: doc(
    sandboxSchema.default(sandboxSchema.parse({})),
    "The episode's sandbox and limits (docs/envs.md#what-an-episode-can-reach).",
  ),
});

/** The bugs a `swe` task can inject (runtime-gpu/arl_swe/mutate.py). */
export const sweMutations = ["flip_comparison", "off_by_one", "swap_operands", "drop_statement"] as const;

/** A coding env: a Python package from its PyPI sdist, bugs injected into it, its own tests as the judge (docs/envs.md#coding-tasks). */
const swe = z.strictObject({
  ...common,
  kind: z.literal("swe"),
  package: doc(
    z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/),
    "The PyPI package whose source distribution is the repository.",
  ),
  package_version: doc(z.string().min(1), "The package's exact version."),
  sha256: doc(
    z.string().regex(/^[0-9a-f]{64}$/),
    "The sha256 of the sdist file; the generator refuses any other bytes.",
  ),
  test_files: doc(
    z.array(z.string().min(1)).min(1),
    "The sdist's test files (relative paths) that judge the tasks; the agent's edits to any file outside source_paths are undone before scoring.",
  ),
  source_paths: doc(
    z.array(z.string().min(1)).min(1),
    "The files or folders of the package's code that bugs are injected into and the agent may change.",
  ),
  import_root: doc(
    z.string().default("."),
    "The folder (relative to the sdist's root) that goes on PYTHONPATH for the tests (`src` for a src layout).",
  ),
  requirements: doc(
    z.string().min(1).nullable().default(null),
    "Path of a pip requirements file pinning (==) and hashing (--hash) every package the tests need, pytest included; they are installed into a venv of their own whose Python runs every test. None: arl's Python runs them (it has pytest).",
  ),
  generator: doc(
    z.string().default("1"),
    "The task generator's version (runtime-gpu/arl_swe); a run refuses one it does not have.",
  ),
  generator_seed: doc(nonNegativeInt.default(0), "Seed of the generation: which bugs, in which order."),
  mutations: doc(
    z
      .array(enumOf(sweMutations))
      .min(1)
      .default([...sweMutations]),
    "The kinds of bug to inject.",
  ),
  max_per_function: doc(
    positiveInt.default(3),
    "At most this many tasks a function, so that tasks spread over the package.",
  ),
  test_timeout_s: doc(
    z.number().positive().default(60),
    "Wall-time limit of one test run (a run_tests call, the scoring run, a generation run); past it the episode is an env error.",
  ),
  max_read_chars: doc(
    positiveInt.default(12000),
    "Characters of a file that read_file shows at most (the rest is cut, with line numbers to ask for more).",
  ),
  max_output_chars: doc(positiveInt.default(6000), "Characters of a test run's output shown (its tail)."),
  max_results: doc(positiveInt.default(50), "Lines that list_files and search show at most."),
  sandbox: doc(
    sandboxSchema.default(sandboxSchema.parse({ mode: "required", memory_mb: 2048, processes: 64, disk_mb: 256 })),
    "The sandbox of every test run and its limits (docs/envs.md#what-an-episode-can-reach); the network is never shared.",
  ),
});

/** The two servers of the AgentRL protocol (docs/envs.md#kind-agentrl). */
export const agentrlModes = ["worker", "controller"] as const;

/** An AgentRL task worker or controller (AgentBench FC): OpenAI messages and tool calls in and out. */
const agentrl = z.strictObject({
  ...common,
  ...external,
  kind: z.literal("agentrl"),
  url: doc(
    z.string().min(1),
    "Base URL of the API: a task worker's (http://host:5021/api) or a controller's (http://host:5020/api).",
  ),
  mode: doc(
    enumOf(agentrlModes).default("worker"),
    "worker: a task worker's own API (the client picks session ids); controller: AgentRL's controller, which routes `task` to its workers and picks the session ids.",
  ),
  max_response_bytes: doc(
    positiveInt.default(8 * 1024 * 1024),
    "Largest answer body accepted from the server, in bytes; a larger one is a protocol error (read no further than this).",
  ),
});

/** An OpenEnv server (create_fastapi_app): episodes over its /ws WebSocket, the action one declared tool. */
const openenv = z.strictObject({
  ...common,
  kind: z.literal("openenv"),
  url: doc(z.string().min(1), "Base URL of the OpenEnv server (http://host:8000); episodes go over ws://host:8000/ws."),
  timeout_s: doc(z.number().positive().default(60), "Time limit of one connect, reset or step."),
  retries: doc(
    nonNegativeInt.default(2),
    "Retries of a refused connection or a full server (CAPACITY_REACHED) before the episode is an env error.",
  ),
  max_sessions: doc(
    positiveInt.default(1),
    "Episodes open at once on the server: its max_concurrent_envs (OpenEnv's default is 1); more episodes wait for a free one.",
  ),
  observation_field: doc(
    z.string().min(1).nullable().default(null),
    "The observation field whose text the model sees; none: the whole observation object as JSON.",
  ),
  max_response_bytes: doc(
    positiveInt.default(8 * 1024 * 1024),
    "Largest message accepted from the server, in bytes; a larger one is a protocol error.",
  ),
});

/** An agent program that owns its loop and calls the model through the run's gateway (docs/gateway.md#agent-programs). */
const agent = z.strictObject({
  ...common,
  kind: z.literal("agent"),
  command: doc(
    z.array(z.string()).min(1),
    "Program and arguments, run from the spec's folder, one process (group) per episode; it calls the model at OPENAI_BASE_URL and prints or POSTs its outcome. A word std:PATH is the stdlib's std/PATH, a first word python:envservers the env servers' Python.",
  ),
  task_file: doc(
    z.string().min(1),
    "Path of the tasks (JSON lines, one task object a line); `tasks` is its line count.",
  ),
  timeout_s: doc(
    z.number().positive().default(120),
    "Time limit of a whole episode; the program's process group is then stopped and the episode is an env error.",
  ),
  max_stderr_bytes: doc(
    positiveInt.default(65536),
    "Bytes of the program's stderr kept (its tail) in the run directory for a failed episode.",
  ),
  sandbox: doc(
    sandboxSchema.default(sandboxSchema.parse({})),
    "The episode's sandbox and limits (docs/envs.md#what-an-episode-can-reach).",
  ),
});

/** How a dataset task's answer is scored (docs/datasets.md). */
export const datasetScorers = ["exact", "number", "boxed", "math_verify", "verl", "trl"] as const;

/** A file of prompts with their answers: one model answer an episode, scored against its row. */
const dataset = z.strictObject({
  ...common,
  kind: z.literal("dataset"),
  data: doc(
    z.string().min(1),
    "Path of the rows: JSON lines (one object a line) or a Parquet file (`.parquet`); `tasks` is their count.",
  ),
  prompt_column: doc(
    z.string().min(1).default("prompt"),
    "The column holding the prompt: a string, or chat messages [{role, content}].",
  ),
  answer_column: doc(
    z.string().min(1).default("answer"),
    "The column holding the ground truth (a dotted path reads a nested field: reward_model.ground_truth).",
  ),
  split_column: doc(
    z.string().min(1).nullable().default(null),
    "A column naming each row's split (train, valid or test); none: `split`'s fractions cut the rows.",
  ),
  scorer: doc(
    enumOf(datasetScorers).default("exact"),
    "exact: equal after normalisation; number: the numbers equal; boxed: the last \\boxed{} equals; math_verify: equivalent by math-verify; verl: the verifier file's compute_score; trl: the verifier file's reward function.",
  ),
  pattern: doc(
    z.string().min(1).nullable().default(null),
    "A regular expression (JavaScript syntax) extracting the answer from the text: its last match, first group; none: the whole text (exact), the last number (number).",
  ),
  verifier: doc(
    z.string().min(1).nullable().default(null),
    "Path of the Python file defining the scoring function (scorer verl or trl).",
  ),
  function: doc(z.string().min(1).default("compute_score"), "The scoring function's name in the verifier file."),
  timeout_s: doc(
    z.number().positive().default(10),
    "Time limit of one verifier call (Python scorers); a call running longer is an env error.",
  ),
  lookup_column: doc(
    z.string().min(1).nullable().default(null),
    "The column of entries ({key: text}) the built-in `lookup` tool reads, in every row; none: no lookup tool. The env's tools (`calculator`, `lookup`) make an episode several turns, ending with the answer.",
  ),
  max_data_bytes: doc(
    positiveInt.default(256 * 1024 ** 2),
    "The most bytes data's file may hold (256 MiB); a larger file is an error at `arl check` and is never read. Its rows are held in memory through the run: raise it for a larger file (at most 1 GiB), or cut the file.",
  ),
  max_row_bytes: doc(
    positiveInt.default(4 * 1024 ** 2),
    "The most bytes one row may hold (4 MiB; a JSON line, or a Parquet row written as JSON); a longer row is reported as file:line at `arl check`, never held whole. Raise it for longer rows (at most 256 MiB).",
  ),
});

/** An env library the env host serves (libraries/): the common fields, the host's own, then the library's knobs. */
function hostLibraryEnv<const K extends string, const S extends z.ZodRawShape>(library: {
  readonly kind: K;
  readonly knobs: S;
}) {
  return z.strictObject({ ...common, ...hostCommonKnobs, kind: z.literal(library.kind), ...library.knobs });
}

type HostLibraries = typeof hostLibraries;
/** The kinds of the host libraries (libraries/index.ts). */
export type HostLibraryKind = HostLibraries[number]["kind"];
/** The semantic schema of each host library's env, in the order of `hostLibraries`. */
type SchemasOf<T extends readonly { readonly kind: string; readonly knobs: z.ZodRawShape }[]> = {
  -readonly [I in keyof T]: ReturnType<typeof hostLibraryEnv<T[I]["kind"], T[I]["knobs"]>>;
};
type HostLibrarySchemas = SchemasOf<HostLibraries>;
const hostLibrarySchemas = hostLibraries.map((library: HostLibrary) =>
  hostLibraryEnv(library),
) as unknown as HostLibrarySchemas;

/** The built-in kinds, whose fields the plan's env schema lists one by one. */
export const builtinEnvKinds = [
  "rooms",
  "findmax",
  "sql",
  "http",
  "subprocess",
  "agentrl",
  "openenv",
  "agent",
  "dataset",
  "swe",
] as const;
export type BuiltinEnvKind = (typeof builtinEnvKinds)[number];
export const envKinds: readonly (BuiltinEnvKind | HostLibraryKind)[] = [
  ...builtinEnvKinds,
  ...hostLibraries.map((l) => l.kind),
];

/** The fields of each kind, in declaration order (the common ones first, then the kind's own). */
export const envKindShapes = {
  rooms: rooms.shape,
  findmax: findmax.shape,
  sql: sql.shape,
  http: http.shape,
  subprocess: subprocess.shape,
  agentrl: agentrl.shape,
  openenv: openenv.shape,
  agent: agent.shape,
  dataset: dataset.shape,
  swe: swe.shape,
} as const satisfies Record<BuiltinEnvKind, z.ZodRawShape>;

/** The fields of each host library kind, in declaration order. */
export const hostLibraryShapes = Object.fromEntries(
  hostLibrarySchemas.map((schema) => [schema.shape.kind.value, schema.shape]),
) as {
  readonly [L in HostLibrarySchemas[number] as L["shape"]["kind"]["value"]]: L["shape"];
};

/** Every field name of some built-in env kind, `kind` included. */
export type EnvFieldName = { [K in BuiltinEnvKind]: keyof (typeof envKindShapes)[K] }[BuiltinEnvKind];

/** `kind` is written as a name (`kind: rooms`); the union needs it as a string. */
function normaliseKind(v: unknown): unknown {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return v;
  const kind = (v as { kind?: unknown }).kind;
  return isPlainName(kind) && kind.$name.length === 1 ? { ...v, kind: kind.$name[0] } : v;
}

export const envSchema = z.preprocess(
  normaliseKind,
  z.discriminatedUnion("kind", [
    rooms,
    findmax,
    sql,
    http,
    subprocess,
    agentrl,
    openenv,
    agent,
    dataset,
    swe,
    ...hostLibrarySchemas,
  ]),
);

export type Env = z.output<typeof envSchema>;
