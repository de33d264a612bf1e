// Upper bounds of every size, count and budget of a plan: one table, read by the plan schema
// (a plan file beyond a bound is refused when it is loaded, naming the field) and by lowering
// (`arl check`, `arl plan` and `arl run SPEC` report the field where the spec sets it). Without
// them `rollout.tasks_per_batch: 1e9` passed and the run sat at 100% CPU with no output.
//
// The bounds are generous for real GPU runs (a 1M-token context, 64k tasks a batch, a million
// iterations): they exist to stop typos and runaway values, not to limit experiments. A field
// is named by its plan path; `*` stands for any env or tool name.

export interface Bound {
  readonly max: number;
  /** Why this bound, for the diagnostic. */
  readonly why: string;
}

const TOKENS = 1_048_576; // 1M tokens: the longest contexts of current models
const SECONDS_A_DAY = 86_400;

export const PLAN_BOUNDS = {
  seed: { max: 2 ** 32 - 1, why: "seeds are 32-bit" },
  "policy.sampling.top_k": { max: TOKENS, why: "no vocabulary is larger" },
  "policy.sampling.max_new_tokens": { max: TOKENS, why: "a context of 1M tokens" },
  "policy.lora.rank": { max: 65_536, why: "wider than any model's hidden size" },
  "envs.*.tasks": { max: 10_000_000, why: "task ids are permuted and split in memory" },
  "envs.*.optimal_steps": { max: 100_000, why: "a solution longer than any turn budget" },
  "envs.*.rooms": { max: 10_000, why: "the world is generated in memory per episode" },
  "envs.*.objects": { max: 10_000, why: "the world is generated in memory per episode" },
  "envs.*.quest_length": { max: 10_000, why: "the quest is solved per episode" },
  "envs.*.visible_tests": { max: 100_000, why: "tests run per episode" },
  "envs.*.hidden_tests": { max: 100_000, why: "tests run per episode" },
  "envs.*.time_limit_ms": { max: SECONDS_A_DAY * 1000, why: "a day" },
  "envs.*.memory_limit_mb": { max: 1_048_576, why: "1 TiB" },
  "envs.*.max_rows": { max: 1_000_000, why: "rows are rendered into an observation" },
  "envs.*.timeout_s": { max: SECONDS_A_DAY, why: "a day" },
  "envs.*.retries": { max: 100, why: "retrying more only delays the env error" },
  "envs.*.max_response_bytes": { max: 1024 ** 3, why: "an answer is read into memory whole" },
  "envs.*.max_sessions": { max: 4096, why: "each open episode holds a connection and a server env" },
  "envs.*.max_stderr_bytes": { max: 1024 ** 3, why: "the tail is kept in memory" },
  "envs.*.sandbox.cpu_s": { max: SECONDS_A_DAY, why: "a day" },
  "envs.*.sandbox.memory_mb": { max: 1_048_576, why: "1 TiB" },
  "envs.*.sandbox.processes": { max: 4_194_304, why: "the kernel's most pids" },
  "envs.*.sandbox.disk_mb": { max: 1_048_576, why: "1 TiB" },
  "envs.*.sandbox.output_bytes": { max: 1024 ** 4, why: "1 TiB" },
  "envs.*.max_data_bytes": { max: 1024 ** 3, why: "a dataset's rows are held in memory through the run" },
  "envs.*.max_row_bytes": { max: 256 * 1024 ** 2, why: "a row is read as one string" },
  "tools.*.timeout_s": { max: SECONDS_A_DAY, why: "a day" },
  "harness.max_turns": { max: 100_000, why: "turns run one after another in one episode" },
  "harness.max_response_tokens": { max: TOKENS, why: "a context of 1M tokens" },
  "harness.max_total_tokens": { max: 16 * TOKENS, why: "the longest contexts of current models, with room" },
  "harness.observation.max_tokens": { max: TOKENS, why: "a context of 1M tokens" },
  "harness.tool_timeout_s": { max: SECONDS_A_DAY, why: "a day" },
  "algorithm.group_size": { max: 4096, why: "G episodes of one task per group" },
  "algorithm.epochs": { max: 1000, why: "passes over one batch" },
  "algorithm.minibatches": { max: 1_048_576, why: "at most one a trajectory" },
  "algorithm.microbatches": { max: 1_048_576, why: "at most one a trajectory" },
  "algorithm.batch_size": { max: 1_048_576, why: "trajectories of one iteration, held in memory" },
  "algorithm.reduction.constant": { max: 16 * TOKENS, why: "a token budget" },
  "algorithm.optimizer.warmup_steps": { max: 100_000_000, why: "optimizer steps" },
  "algorithm.critic.optimizer.warmup_steps": { max: 100_000_000, why: "optimizer steps" },
  "algorithm.kl.reference.every": { max: 100_000_000, why: "optimizer steps" },
  "algorithm.dynamic_sampling.max_rounds": { max: 1000, why: "rounds of resampling per iteration" },
  "algorithm.overlong.buffer": { max: TOKENS, why: "a token budget" },
  "rollout.tasks_per_batch": { max: 65_536, why: "tasks of one iteration, played and held in memory" },
  "rollout.iterations": { max: 10_000_000, why: "iterations of one run" },
  "rollout.concurrency": { max: 65_536, why: "episodes (env processes, connections) at once" },
  "rollout.async.max_policy_lag": { max: 100_000_000, why: "optimizer steps" },
  "rollout.async.max_staleness": { max: 64, why: "batches rolling out at once, each held in memory until its update" },
  "rollout.sft.demos": { max: 10_000_000, why: "demonstrations held in memory" },
  "rollout.sft.epochs": { max: 1000, why: "passes over the demonstrations" },
  "rollout.sft.batch": { max: 10_000_000, why: "demonstrations per step" },
  "rollout.sft.checkpoint_every": { max: 100_000_000, why: "optimizer steps" },
  "rollout.sft.max_data_bytes": {
    max: 1024 ** 3,
    why: "the records are held in memory, about 2.5 times the file in the heap",
  },
  "rollout.sft.max_record_bytes": { max: 256 * 1024 ** 2, why: "a record is read as one string" },
  "rollout.watchdog.no_signal_iterations": { max: 10_000_000, why: "iterations of one run" },
  "eval.every": { max: 10_000_000, why: "iterations of one run" },
  "eval.samples_per_task": { max: 4096, why: "episodes per evaluated task" },
  "eval.k.*": { max: 4096, why: "at most the samples per task" },
  "eval.tasks": { max: 10_000_000, why: "at most the tasks of an env" },
  "algorithm.clip.low": {
    max: 1,
    why: "the ratio is clipped below at 1 - low, which must stay >= 0; the trainers refuse more",
  },
  "resources.gpus": { max: 65_536, why: "GPUs of one job" },
  "resources.nodes": { max: 8192, why: "machines of one job" },
  "resources.rollout.servers": { max: 4096, why: "inference server replicas of one job" },
} as const satisfies Record<string, Bound>;

export type BoundedField = keyof typeof PLAN_BOUNDS;

/**
 * The shape parameters of the embedded model, written in its name (`builtin:tiny?hidden=32`,
 * plan/model-name.ts): the CPU trainer's tensors are this big per token.
 */
export const TINY_SHAPE_BOUNDS = {
  embed: { max: 4096, why: "embedding width of a CPU model" },
  hidden: { max: 4096, why: "GRU width of a CPU model" },
  heads: { max: 64, why: "read-out heads of a CPU model" },
  key: { max: 1024, why: "read-out key size of a CPU model" },
} as const satisfies Record<string, Bound>;

export function boundOf(field: BoundedField): Bound {
  return PLAN_BOUNDS[field];
}

/** The message of a value beyond its bound, the same at check time and at plan load. */
export function boundMessage(field: string, value: number, bound: Bound): string {
  return `${field} is ${value}, above its bound ${bound.max} (${bound.why})`;
}

export interface BoundViolation {
  /** The concrete plan path, e.g. ["envs", "code", "tasks"]. */
  readonly path: readonly (string | number)[];
  readonly field: BoundedField;
  readonly value: number;
  readonly bound: Bound;
}

/** The bounded fields with their dotted patterns split once (boundViolations runs once per variant). */
const BOUND_PATTERNS = (Object.keys(PLAN_BOUNDS) as BoundedField[]).map((field) => ({
  field,
  bound: PLAN_BOUNDS[field],
  pattern: field.split("."),
}));

/** Every value of a plan (or plan-shaped object) above its bound. */
export function boundViolations(plan: unknown): BoundViolation[] {
  const out: BoundViolation[] = [];
  const path: (string | number)[] = [];
  for (const { field, bound, pattern } of BOUND_PATTERNS) {
    visitAt(plan, pattern, 0, path, (value) => {
      if (typeof value === "number" && value > bound.max) out.push({ path: [...path], field, value, bound });
    });
  }
  return out;
}

/**
 * Calls `found` with each value at a dotted pattern (`*` matches every key or index), `path`
 * holding its concrete path meanwhile: one shared path, copied only for a value out of bounds.
 */
function visitAt(
  root: unknown,
  pattern: readonly string[],
  depth: number,
  path: (string | number)[],
  found: (value: unknown) => void,
): void {
  const head = pattern[depth];
  if (head === undefined) {
    found(root);
    return;
  }
  if (root === null || typeof root !== "object") return;
  const record = root as Record<string | number, unknown>;
  const step = (k: string | number) => {
    path.push(k);
    visitAt(record[k], pattern, depth + 1, path, found);
    path.pop();
  };
  if (head !== "*") step(head);
  else if (Array.isArray(root)) for (let i = 0; i < root.length; i++) step(i);
  else for (const k of Object.keys(root)) step(k);
}
