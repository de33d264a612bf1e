// The plan's env schema, derived from the semantic one (src/semantics/schema/env.ts): the kinds
// and the fields of each kind, in their order, come from there; this file says only how each
// field appears in a plan (no defaults left, `none` as null, bounds, files by content hash).
import * as z from "zod";
import {
  agentrlModes,
  sandboxModes,
  type BuiltinEnvKind as EnvKind,
  datasetScorers,
  type EnvFieldName,
  envKindShapes,
  findmaxFunctions,
  type HostLibraryKind,
  sweMutations,
  hostLibraryShapes,
  signalScopes,
  signalTypes,
} from "../semantics/schema/env.js";
import { hostLibraries } from "../contracts/libraries/index.js";
import { type HostLibrary, libraryObject } from "../contracts/libraries/library.js";
import {
  bounded,
  d,
  dataFileSchema,
  jsonValueSchema,
  nonNegativeInt,
  positiveInt,
  probability,
} from "./schema-parts.js";

/** Task ids as half-open ranges [from, to), ascending and disjoint. */
const idRangesSchema = z.array(z.tuple([nonNegativeInt, nonNegativeInt]));

const rowSplitsSchema = z
  .strictObject({
    column: z.string().min(1),
    train: d(idRangesSchema, "The rows (task ids) of the train split, as [from, to) ranges."),
    valid: idRangesSchema,
    test: idRangesSchema,
  })
  .meta({ id: "RowSplits" });

const signalSchema = z.strictObject({
  scope: d(z.enum(signalScopes), "outcome: known at the end of the episode; state: after every step."),
  type: z.enum(signalTypes),
  min: d(z.number().nullable(), "Smallest value the env reports; null: unbounded."),
  max: d(z.number().nullable(), "Largest value the env reports; null: unbounded."),
  violation: d(z.boolean(), "The signal reports a rule violation."),
});

/**
 * Each env field as the plan holds it; `null`: not a field of the plan's env (the env's tools
 * are lowered into the plan's `tools`). A field of the semantic schema missing here, or one
 * here that the semantic schema lacks, is a type error.
 */
const planEnvFields = {
  // Every kind.
  description: d(z.string().nullable(), "What the environment is."),
  version: d(z.string(), "Version of the task set."),
  tasks: d(bounded("envs.*.tasks", positiveInt), "Task ids are 0..tasks-1."),
  split: d(
    z.strictObject({ train: probability, valid: probability, test: probability }),
    "Disjoint train/valid/test fractions of the task ids.",
  ),
  weight: d(z.number().positive(), "Mixing weight in a multi-task batch."),
  signals: d(z.record(z.string(), signalSchema), "Typed signals the env exposes, by name."),
  tool: null,
  optimal_steps: d(
    bounded("envs.*.optimal_steps", positiveInt).nullable(),
    "Length of an optimal solution, where known.",
  ),
  budget_is_task_rule: d(
    z.boolean(),
    "Running out of turns is the task's own end (terminated), not a collection limit (truncated).",
  ),
  reward_range: d(z.tuple([z.number(), z.number()]), "Range the env's own reward is mapped to."),
  // rooms
  rooms: bounded("envs.*.rooms", positiveInt),
  objects: bounded("envs.*.objects", nonNegativeInt),
  quest_length: bounded("envs.*.quest_length", positiveInt),
  // findmax
  functions: z.array(z.enum(findmaxFunctions)).min(1),
  visible_tests: bounded("envs.*.visible_tests", positiveInt),
  hidden_tests: bounded("envs.*.hidden_tests", positiveInt),
  time_limit_ms: bounded("envs.*.time_limit_ms", positiveInt),
  memory_limit_mb: bounded("envs.*.memory_limit_mb", positiveInt),
  require_namespaces: d(
    z.boolean(),
    "Refuse to run where the sandbox has no mount and PID namespaces; false: run without them, warned.",
  ),
  // sql
  database: d(dataFileSchema.nullable(), "The SQLite database; null: the generated demo database."),
  questions: d(dataFileSchema.nullable(), "The questions (JSON lines); null: the generated demo questions."),
  read_only: z.boolean(),
  max_rows: bounded("envs.*.max_rows", positiveInt),
  // External task servers (http, subprocess).
  timeout_s: d(
    bounded("envs.*.timeout_s", z.number().positive()),
    "Time limit of one reset or step (http, subprocess, agentrl, openenv), of a whole episode (agent), of one verifier call (dataset).",
  ),
  retries: d(bounded("envs.*.retries", nonNegativeInt), "Retries of a failed call before the episode is an env error."),
  task: d(z.string().nullable(), "Task name on the server."),
  url: z.string().min(1),
  max_response_bytes: d(
    bounded("envs.*.max_response_bytes", positiveInt),
    "Largest answer body accepted from the server, in bytes; a larger one is a protocol error.",
  ),
  command: z.array(z.string()).min(1),
  // agentrl, openenv
  mode: d(z.enum(agentrlModes), "worker: a task worker's API; controller: AgentRL's controller."),
  max_sessions: d(
    bounded("envs.*.max_sessions", positiveInt),
    "Episodes open at once on the server; more wait for a free one.",
  ),
  observation_field: d(
    z.string().min(1).nullable(),
    "The observation field the model sees; null: the whole observation as JSON.",
  ),
  // agent
  task_file: d(dataFileSchema, "The tasks (JSON lines); `tasks` is its line count."),
  max_stderr_bytes: d(
    bounded("envs.*.max_stderr_bytes", positiveInt),
    "Bytes of a failed episode's stderr kept in the run directory.",
  ),
  // agent, subprocess
  sandbox: d(
    z
      .strictObject({
        mode: d(
          z.enum(sandboxModes),
          "auto: sandboxed where bubblewrap works, else warned; required: refuse without it; off: unsandboxed.",
        ),
        network: d(z.boolean(), "Keep the host's network; false: only the gateway, over the sandbox's own loopback."),
        cpu_s: bounded("envs.*.sandbox.cpu_s", positiveInt),
        memory_mb: bounded("envs.*.sandbox.memory_mb", positiveInt),
        processes: bounded("envs.*.sandbox.processes", positiveInt),
        disk_mb: bounded("envs.*.sandbox.disk_mb", positiveInt),
        output_bytes: bounded("envs.*.sandbox.output_bytes", positiveInt),
      })
      .meta({ id: "EpisodeSandbox" }),
    "The episode's bubblewrap sandbox and limits (docs/envs.md#what-an-episode-can-reach).",
  ),
  // dataset
  data: d(dataFileSchema, "The rows (JSON lines or Parquet); `tasks` is their count."),
  prompt_column: d(z.string().min(1), "The column holding the prompt (text or chat messages)."),
  answer_column: d(z.string().min(1), "The column holding the ground truth; dots read nested fields."),
  split_column: d(
    rowSplitsSchema.nullable(),
    "The rows' own splits, read from a column at compile time; null: `split`'s fractions cut the rows.",
  ),
  scorer: z.enum(datasetScorers),
  pattern: d(
    z.string().min(1).nullable(),
    "The answer's extraction pattern (JavaScript regular expression); null: the scorer's default.",
  ),
  verifier: d(dataFileSchema.nullable(), "The Python file defining the scoring function (scorer verl or trl)."),
  function: d(z.string().min(1), "The scoring function's name in the verifier file."),
  lookup_column: d(z.string().min(1).nullable(), "The column of entries the lookup tool reads; null: none."),
  max_data_bytes: d(
    bounded("envs.*.max_data_bytes", positiveInt),
    "The most bytes the rows file may hold (checked when compiling and when the run reads it).",
  ),
  max_row_bytes: d(
    bounded("envs.*.max_row_bytes", positiveInt),
    "The most bytes one row may hold; a longer one is a bad row, named by file:line.",
  ),
  // swe
  package: d(z.string().min(1), "The PyPI package whose sdist is the repository."),
  package_version: z.string().min(1),
  sha256: d(z.string().regex(/^[0-9a-f]{64}$/), "The sdist's sha256, checked by the generator."),
  test_files: z.array(z.string().min(1)).min(1),
  source_paths: z.array(z.string().min(1)).min(1),
  import_root: z.string(),
  requirements: d(
    dataFileSchema.nullable(),
    "The tests' requirements file (pinned and hashed); null: arl's Python runs the tests.",
  ),
  generator: d(
    z.string(),
    "The task generator's version; with the package, sha256, seed and knobs it determines the tasks.",
  ),
  generator_seed: nonNegativeInt,
  mutations: z.array(z.enum(sweMutations)).min(1),
  max_per_function: positiveInt,
  test_timeout_s: d(z.number().positive(), "Wall-time limit of one test run."),
  max_read_chars: positiveInt,
  max_output_chars: positiveInt,
  max_results: positiveInt,
} as const satisfies Record<Exclude<EnvFieldName, "kind">, z.ZodType | null>;

type PlanEnvFields = typeof planEnvFields;

/** The plan's shape of one kind: `kind` first, then the kind's fields that the plan holds. */
type PlanEnvShape<K extends EnvKind> = { kind: z.ZodLiteral<K> } & {
  [
    F in Exclude<keyof (typeof envKindShapes)[K], "kind"> as F extends keyof PlanEnvFields
      ? PlanEnvFields[F] extends null
        ? never
        : F
      : never
  ]: F extends keyof PlanEnvFields ? Exclude<PlanEnvFields[F], null> : never;
};

function planEnvKind<K extends EnvKind>(kind: K): z.ZodObject<PlanEnvShape<K>, z.core.$strict> {
  const shape: Record<string, z.ZodType> = { kind: z.literal(kind) };
  for (const field of Object.keys(envKindShapes[kind])) {
    const form = field === "kind" ? null : planEnvFields[field as Exclude<EnvFieldName, "kind">];
    if (form !== null) shape[field] = form;
  }
  return z.strictObject(shape) as unknown as z.ZodObject<PlanEnvShape<K>, z.core.$strict>;
}

/**
 * The user's code behind an env (an agent program's files, a verifiers taskset's or a gymnasium
 * entry point's module, in the spec's folder: src/plan/lower-code-files.ts), so that editing it
 * changes the plan's hash. Absent when the env names none (and in plans of older arl).
 */
const envCodeSchema = d(
  z.array(dataFileSchema).optional(),
  "The user's code files behind the env (its program, taskset or entry point module), each with its sha256; absent: none in the spec's folder.",
);

/** A folder of the user's data files (a host library's `folders` knob): each file by its path and sha256, in name order. */
const dataFolderSchema = z
  .strictObject({
    path: d(z.string().min(1), "POSIX path of the folder relative to the directory of the entry spec."),
    files: d(z.array(dataFileSchema), "The folder's files the library reads, in name order, each with its sha256."),
  })
  .meta({ id: "DataFolder" });

/** A knob's plan form: its semantic schema without the default (the plan holds every value); a folder or file knob, its hashed files. */
function planKnob(schema: z.ZodType, data: "folder" | "file" | undefined): z.ZodType {
  const written = schema instanceof z.ZodDefault ? (schema.unwrap() as z.ZodType) : schema;
  if (data === "folder") return dataFolderSchema.nullable();
  if (data === "file") return written instanceof z.ZodNullable ? dataFileSchema.nullable() : dataFileSchema;
  // The plan's one JSON value schema, so that the published schema names it once.
  if (written === libraryObject) return z.record(z.string(), jsonValueSchema);
  return written;
}

type WithoutDefault<T> = T extends z.ZodDefault<infer U> ? U : T;
type HostLibraries = typeof hostLibraries;
/** The declaration of the host library of kind K. */
type LibraryOf<K extends HostLibraryKind> = Extract<HostLibraries[number], { kind: K }>;
/** The names of L's knobs that are listed under L[P] (folders, files). */
type DataKnobs<L, P extends "folders" | "files"> = L extends { readonly [Q in P]: infer D } ? keyof D : never;
/** The plan form of knob F of library kind K (its semantic schema S): a folder's or a file's hashed files, else S without its default. */
type PlanKnob<K extends HostLibraryKind, F, S> =
  F extends DataKnobs<LibraryOf<K>, "folders">
    ? z.ZodNullable<typeof dataFolderSchema>
    : F extends DataKnobs<LibraryOf<K>, "files">
      ? WithoutDefault<S> extends z.ZodNullable<z.ZodType>
        ? z.ZodNullable<typeof dataFileSchema>
        : typeof dataFileSchema
      : WithoutDefault<S>;
/**
 * The plan's shape of a host library kind, typed: the common fields as every kind has them, then
 * the host's knobs and the library's own, each as its semantic schema without its default.
 */
type PlanLibraryShape<K extends HostLibraryKind> = { kind: z.ZodLiteral<K> } & {
  [F in Exclude<keyof (typeof hostLibraryShapes)[K], "kind" | "tool">]: F extends keyof PlanEnvFields
    ? Exclude<PlanEnvFields[F], null>
    : PlanKnob<K, F, (typeof hostLibraryShapes)[K][F]>;
};

function planLibraryKind<K extends HostLibraryKind>(
  library: HostLibrary<K>,
): z.ZodObject<PlanLibraryShape<K>, z.core.$strict> {
  const shape: Record<string, z.ZodType> = { kind: z.literal(library.kind) };
  for (const [field, schema] of Object.entries(hostLibraryShapes[library.kind] as z.ZodRawShape)) {
    if (field === "kind") continue;
    const common = planEnvFields[field as Exclude<EnvFieldName, "kind">] as z.ZodType | null | undefined;
    if (common === null) continue;
    const data = library.folders?.[field] ? "folder" : library.files?.[field] ? "file" : undefined;
    shape[field] = common === undefined ? planKnob(schema as z.ZodType, data) : common;
  }
  if (library.kind === "gymnasium") shape.code = envCodeSchema;
  // The knobs are plain JSON values the runtime hands to the library as they are.
  return z.strictObject(shape) as unknown as z.ZodObject<PlanLibraryShape<K>, z.core.$strict>;
}

/** Each host library's plan schema, in the order of `hostLibraries`. */
type PlanSchemasOf<T extends readonly { readonly kind: HostLibraryKind }[]> = {
  -readonly [I in keyof T]: z.ZodObject<PlanLibraryShape<T[I]["kind"]>, z.core.$strict>;
};
type PlanLibrarySchemas = PlanSchemasOf<HostLibraries>;

export const planEnvSchema = z
  .discriminatedUnion("kind", [
    planEnvKind("rooms"),
    planEnvKind("findmax"),
    planEnvKind("sql"),
    planEnvKind("http"),
    planEnvKind("subprocess"),
    planEnvKind("agentrl"),
    planEnvKind("openenv"),
    planEnvKind("agent").extend({ code: envCodeSchema }),
    planEnvKind("dataset"),
    planEnvKind("swe"),
    ...(hostLibraries.map((library) => planLibraryKind(library)) as unknown as PlanLibrarySchemas),
  ])
  .meta({ id: "Env" });
