// Every refusal `arl run` can give from the plan alone has a check-time twin. The table: the
// refusal, a spec that triggers it (check must report the code at the field's line), and a plan
// file that carries the same fault (plan files skip the checker): the runtime must still refuse
// it, naming the field, or the refusal is now unreachable (said per row).
//
// Refusals that depend on more than the plan are not in the table: the trainer's capabilities
// (rollout.async needs behaviour_policy, rollout.sft.lr needs step_lr, mask.tis needs is_weights;
// orchestrator.ts, run/provision.ts,
// sft.ts), inference servers the embedded model cannot be served by (engine vllm or sglang
// launched for builtin:tiny without --engine-command, vLLM launched for a model folder that ties its embeddings; below), a trainer that is not built (trainer/launch.ts), a plan on several nodes without a
// rendezvous (flags or the cluster's environment; test/cli/run-nodes.test.ts), cross-policy pool models (served by
// whatever trainer command runs), and data (walkthroughs that all fail, env errors).
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { envKinds } from "../../src/envs/registry.js";
import { planHash } from "../../src/plan/hash.js";
import { KINDS_WITH_WALKTHROUGHS, TORCH_BUILTIN_PARAMETERS, TORCH_BUILTIN_PRESETS } from "../../src/plan/runnable.js";
import { planSchema, type Plan } from "../../src/plan/schema.js";
import { executePlan, RunError } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { runArl } from "../helpers/cli.js";
import { COUNTER_SIGNALS_AND_TOOLS, scriptedTrainerScript } from "../helpers/plans.js";
import { lower, workspace } from "./support.js";

/** A findmax experiment that checks clean; `body` goes inside it, `env` replaces its env. */
function spec(body: string, env = "env code extends findmax.task {}"): string {
  return `import "std/algorithms" as algo
import "std/envs/findmax" as findmax
experiment e {
  policy { model: "builtin:tiny" }
  ${env}
  reward { success: outcome.tests_passed }
  algorithm extends algo.rloo {}
${body}
}
`;
}

/** A spec around a subprocess env (no walkthroughs), rewarded by its own success signal. */
const subprocessSpec = (body: string, signals = "    signals { success { scope: outcome, type: bool } }\n") =>
  spec(body, `env w {\n    kind: subprocess\n    command: ["./env"]\n${signals}  }`).replace(
    "outcome.tests_passed",
    "episode.terminated",
  );

/** The one plan of a clean spec, changed by `edit` and hashed again: a plan file with the fault. */
function faultyPlan(clean: string, edit: (plan: Plan) => void, files: Record<string, string> = {}): Plan {
  const [lowered] = lower(path.join(workspace({ ...files, "spec.arl": clean }), "spec.arl"));
  const plan = JSON.parse(JSON.stringify(lowered!.plan)) as Plan;
  edit(plan);
  return { ...plan, hash: planHash(plan) };
}

function checkErrors(text: string, files: Record<string, string> = {}): { code: string; line: number }[] {
  const dir = workspace({ ...files, "spec.arl": text });
  return new Compiler()
    .check(path.join(dir, "spec.arl"))
    .diagnostics.filter((d) => d.severity === "error")
    .map((d) => ({ code: d.code, line: d.range.start.line }));
}

/** The line (1-based) of the first line of `text` containing `marker`. */
function lineOf(text: string, marker: string): number {
  const i = text.split("\n").findIndex((l) => l.includes(marker));
  if (i < 0) throw new Error(`no line with ${marker}`);
  return i + 1;
}

async function runtimeRefusal(plan: Plan): Promise<string> {
  const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-refusal-")), plan);
  const error = await executePlan({
    plan,
    runDir,
    trainer: { file: process.execPath, args: [scriptedTrainerScript] },
    envs: envKinds,
    log: () => undefined,
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RunError);
  return (error as RunError).message;
}

interface Row {
  readonly refusal: string;
  /** A spec with the fault, and the text of the line check must report it on. */
  readonly spec: string;
  readonly at: string;
  readonly code: string;
  /** The same fault in a plan file, and what the runtime's refusal must say. */
  readonly plan?: () => Plan;
  readonly runtimeSays?: readonly string[];
  /** Data files beside the spec. */
  readonly files?: Record<string, string>;
}

const cleanSmall = spec("  eval { split: test }");

/** A spec around an http env at `url`, rewarded by its success signal. */
const httpSpec = (url: string) =>
  spec(
    "",
    `env counter {\n    kind: http\n    url: "${url}"\n    tasks: 4\n    split { train: 0.5, test: 0.5 }${COUNTER_SIGNALS_AND_TOOLS}\n  }`,
  ).replace("outcome.tests_passed", "outcome.success");

/** A spec around an agent env (its tasks: the lines of data/tasks.jsonl). */
const agentFiles = { "data/tasks.jsonl": Array.from({ length: 10 }, (_, i) => `{"n": ${i}}\n`).join("") };
const agentSpec = (body: string) =>
  spec(
    body,
    `env support extends agent.program {\n    command: ["python3", "agent.py"]\n    task_file: "./data/tasks.jsonl"\n    signals { success { scope: outcome, type: bool } }\n  }`,
  )
    .replace("outcome.tests_passed", "outcome.success")
    .replace('import "std/envs/findmax" as findmax', 'import "std/envs/agent" as agent');

const table: readonly Row[] = [
  {
    refusal: "an empty eval split (the run printed an empty eval)",
    spec: spec("", "env code extends findmax.task {\n    tasks: 3\n    split { train: 0.67, test: 0.33 }\n  }"),
    at: "test: 0.33",
    code: "empty-split",
    plan: () =>
      faultyPlan(
        cleanSmall,
        (p) => ((p.envs.code!.tasks = 3), (p.envs.code!.split = { train: 0.67, valid: 0, test: 0.33 })),
      ),
    runtimeSays: ["plan field envs.code.split.test", "the test split has 0 tasks", "empty-split"],
  },
  {
    // Was "env 'code' has no training tasks" in the first iteration's task sampling; now refused before anything starts.
    refusal: "an empty train split",
    spec: spec("", "env code extends findmax.task {\n    tasks: 2\n    split { train: 0.4, test: 0.6 }\n  }"),
    at: "train: 0.4",
    code: "empty-split",
    plan: () =>
      faultyPlan(
        cleanSmall,
        (p) => ((p.envs.code!.tasks = 2), (p.envs.code!.split = { train: 0.4, valid: 0, test: 0.6 })),
      ),
    runtimeSays: ["plan field envs.code.split.train", "the train split has 0 tasks", "empty-split"],
  },
  {
    // The runtime's twin is the embedded trainer's own configure refusal (and `arl run PLAN.json`, below).
    refusal: "an hf: model on the embedded trainer (backend local)",
    spec: spec("").replace('model: "builtin:tiny"', 'model: "hf:Qwen/Qwen2.5-0.5B"'),
    at: "hf:Qwen",
    code: "local-backend-model",
  },
  {
    refusal: "a chat template on the embedded trainer",
    spec: spec("").replace('model: "builtin:tiny"', 'model: "builtin:tiny", chat_template: "chatml"'),
    at: "chatml",
    code: "local-backend-model",
  },
  {
    // The runtime's twin is the embedded trainer's configure refusal naming policy.lora.
    refusal: "LoRA adapters on the embedded trainer",
    spec: spec("").replace('model: "builtin:tiny"', 'model: "builtin:tiny", lora { rank: 8, alpha: 16 }'),
    at: "lora {",
    code: "local-backend-model",
  },
  {
    refusal: "a weight dtype other than float32 on the embedded trainer",
    spec: spec("").replace('model: "builtin:tiny"', 'model: "builtin:tiny", dtype: bfloat16'),
    at: "bfloat16",
    code: "local-backend-model",
  },
  {
    refusal: "a builtin:tiny shape the embedded trainer cannot build",
    spec: spec("").replace('model: "builtin:tiny"', 'model: "builtin:tiny?hidden=100000"'),
    at: "hidden=100000",
    code: "local-backend-model",
  },
  {
    // The runtime's twin is the PyTorch trainer's configure refusal (and `arl run PLAN.json`).
    refusal: "a builtin model parameter the PyTorch trainer does not know",
    spec: spec("  resources { backend: torch }").replace('model: "builtin:tiny"', 'model: "builtin:tiny?embed=8"'),
    at: "embed=8",
    code: "torch-backend-model",
  },
  {
    refusal: "rollout.sft on an env kind without walkthroughs",
    spec: subprocessSpec("  rollout { sft { demos: 4 } }"),
    at: "sft { demos",
    code: "sft-without-walkthroughs",
    plan: () =>
      faultyPlan(
        subprocessSpec(""),
        (p) =>
          (p.rollout.sft = {
            demos: 4,
            data: null,
            max_data_bytes: 256 * 1024 ** 2,
            max_record_bytes: 4 * 1024 ** 2,
            heldout: 0,
            epochs: 1,
            batch: null,
            lr: null,
            checkpoint_every: null,
            optimizer: "fresh",
          }),
      ),
    runtimeSays: ["plan field rollout.sft", "env 'w' is of kind 'subprocess'", "sft-without-walkthroughs"],
  },
  {
    // Was accepted, hashed and silently not applied (the runtime's rewards have no overlong term).
    refusal: "DAPO's overlong shaping, which the runtime does not apply",
    spec: spec("").replace(
      "algorithm extends algo.rloo {}",
      "algorithm extends algo.rloo { overlong { buffer: 8, penalty: 1.0 } }",
    ),
    at: "overlong",
    code: "overlong-unsupported",
    plan: () => faultyPlan(cleanSmall, (p) => (p.algorithm.overlong = { buffer: 8, penalty: 1 })),
    runtimeSays: ["plan field algorithm.overlong", "do not apply", "overlong-unsupported"],
  },
  {
    refusal: "a size beyond its bound (tasks_per_batch 1e9 sat at 100% CPU with no output)",
    spec: spec("  rollout {\n    tasks_per_batch: 1000000000\n  }"),
    at: "tasks_per_batch",
    code: "value-out-of-bounds",
    plan: () => faultyPlan(cleanSmall, (p) => (p.rollout.tasks_per_batch = 1e9)),
    runtimeSays: ["plan field rollout.tasks_per_batch", "above its bound 65536", "value-out-of-bounds"],
  },
  {
    refusal: "clip.low above 1 (the trainers refused it at the first train step)",
    spec: spec("  algorithm.clip.low: 1.5"),
    at: "clip.low",
    code: "value-out-of-bounds",
    plan: () => faultyPlan(cleanSmall, (p) => (p.algorithm.clip.low = 1.5)),
    runtimeSays: ["plan field algorithm.clip.low", "value-out-of-bounds"],
  },
  {
    refusal: "asynchronous rollout whose lag limit drops every pipelined sample (lint rule)",
    spec: spec("  algorithm.epochs: 2\n  rollout { async { max_policy_lag: 1 } }"),
    at: "max_policy_lag",
    code: "policy-lag-below-update-steps",
    plan: () =>
      faultyPlan(
        cleanSmall,
        (p) => (
          (p.algorithm.epochs = 2),
          (p.rollout.async = {
            max_staleness: 1,
            in_flight_updates: false,
            generation: "trainer",
            max_policy_lag: 1,
            past_max_lag: "drop",
          })
        ),
      ),
    runtimeSays: ["plan field rollout.async.max_policy_lag", "policy-lag-below-update-steps"],
  },
  {
    // The runtime's twin is also the PyTorch trainer's configure refusal (unsupported, naming the field).
    refusal: "a refreshed KL reference with LoRA (the reference is the base model, the adapters disabled)",
    spec: spec("  resources { backend: torch }\n  algorithm.kl.reference: refresh(4)").replace(
      'model: "builtin:tiny"',
      'model: "hf:Qwen/Qwen3-0.6B", lora { rank: 8, alpha: 16 }',
    ),
    at: "refresh(4)",
    code: "lora-reference-refresh",
    plan: () =>
      faultyPlan(
        cleanSmall,
        (p) => (
          (p.policy.lora = { rank: 8, alpha: 16, dropout: 0, targets: ["q_proj"] }),
          (p.algorithm.kl.reference = { kind: "refresh", every: 4 })
        ),
      ),
    runtimeSays: ["plan field algorithm.kl.reference", "policy.lora", "lora-reference-refresh"],
  },
  {
    // The gateway serves agent programs from the policy alone.
    refusal: "cross-policy sampling with an agent env (no pool model would generate a turn)",
    spec: agentSpec('  rollout { cross_policy { pool: ["builtin:tiny"], probability: 0.5 } }'),
    at: "cross_policy",
    code: "cross-policy-agent",
    files: agentFiles,
    plan: () =>
      faultyPlan(
        agentSpec(""),
        (p) => (p.rollout.cross_policy = { pool: ["builtin:tiny"], probability: 0.5 }),
        agentFiles,
      ),
    runtimeSays: ["plan field rollout.cross_policy", "env 'support' is an agent program", "cross-policy-agent"],
  },
  {
    refusal: "inference servers both launched and listed at urls",
    spec: spec('  resources {\n    rollout {\n      engine: vllm\n      urls: ["http://10.0.0.5:8000"]\n    }\n  }'),
    at: "urls:",
    code: "engine-servers",
    plan: () =>
      faultyPlan(
        cleanSmall,
        (p) => ((p.resources.rollout.engine = "vllm"), (p.resources.rollout.urls = ["http://10.0.0.5:8000"])),
      ),
    runtimeSays: ["plan field resources.rollout.urls", "launch is true", "engine-servers"],
  },
  {
    refusal: "inference servers neither launched nor listed",
    spec: spec("  resources {\n    rollout {\n      engine: sglang\n      launch: false\n    }\n  }"),
    at: "launch: false",
    code: "engine-servers",
    plan: () =>
      faultyPlan(cleanSmall, (p) => ((p.resources.rollout.engine = "sglang"), (p.resources.rollout.launch = false))),
    runtimeSays: ["plan field resources.rollout.launch", "urls names none", "engine-servers"],
  },
  {
    refusal: "a server count other than the urls listed",
    spec: spec(
      '  resources {\n    rollout {\n      engine: vllm\n      launch: false\n      servers: 2\n      urls: ["http://10.0.0.5:8000"]\n    }\n  }',
    ),
    at: "servers: 2",
    code: "engine-servers",
    plan: () =>
      faultyPlan(cleanSmall, (p) =>
        Object.assign(p.resources.rollout, {
          engine: "vllm",
          launch: false,
          servers: 2,
          urls: ["http://10.0.0.5:8000"],
        }),
      ),
    runtimeSays: ["plan field resources.rollout.servers", "servers is 2, and urls names 1 server", "engine-servers"],
  },
  {
    refusal: "asynchronous rollout beyond one batch ahead with an inference engine (its servers serve one version)",
    spec: spec(
      "  resources {\n    rollout {\n      engine: vllm\n    }\n  }\n  mask { tis { cap: 2, level: token } }\n  rollout {\n    async {\n      max_staleness: 2\n      max_policy_lag: 2\n    }\n  }",
    ),
    at: "max_staleness: 2",
    code: "async-engine",
    plan: () =>
      faultyPlan(
        cleanSmall,
        (p) => (
          (p.resources.rollout.engine = "vllm"),
          (p.rollout.async = {
            max_staleness: 2,
            in_flight_updates: false,
            generation: "trainer",
            max_policy_lag: 2,
            past_max_lag: "drop",
          })
        ),
      ),
    runtimeSays: ["plan field rollout.async.max_staleness", "engine vllm", "async-engine"],
  },
  {
    refusal: "a generation replica beside inference servers (they already generate apart from the trainer)",
    spec: spec(
      "  resources {\n    rollout {\n      engine: vllm\n    }\n  }\n  rollout {\n    async {\n      generation: replica\n      max_policy_lag: 1\n    }\n  }",
    ),
    at: "generation: replica",
    code: "async-replica-engine",
    plan: () =>
      faultyPlan(
        cleanSmall,
        (p) => (
          (p.resources.rollout.engine = "vllm"),
          (p.rollout.async = {
            max_staleness: 1,
            in_flight_updates: false,
            generation: "replica",
            max_policy_lag: 1,
            past_max_lag: "drop",
          })
        ),
      ),
    runtimeSays: ["plan field rollout.async.generation", "engine vllm", "async-replica-engine"],
  },
  {
    refusal: "a generation replica of a trainer that runs as several processes",
    spec: spec(
      "  resources {\n    backend: torch\n    gpus: 2\n  }\n  rollout {\n    async {\n      generation: replica\n      max_policy_lag: 1\n    }\n  }",
    ),
    at: "generation: replica",
    code: "async-replica-processes",
    plan: () =>
      faultyPlan(cleanSmall, (p) => {
        p.rollout.async = {
          max_staleness: 1,
          in_flight_updates: false,
          generation: "replica",
          max_policy_lag: 1,
          past_max_lag: "drop",
        };
        Object.assign(p.stages.update, { processes: 2, processes_per_node: 2 });
      }),
    runtimeSays: ["plan field rollout.async.generation", "a trainer of 2 processes", "async-replica-processes"],
  },
  {
    refusal:
      "in-flight weight updates without the keep-sampling mask (no one set of weights can recompute the behaviour log-probs)",
    spec: spec(
      "  mask { keep_sampling_mask: false }\n  rollout {\n    async {\n      in_flight_updates: true\n      max_policy_lag: 1\n    }\n  }",
    ),
    at: "in_flight_updates: true",
    code: "async-in-flight-recompute",
    plan: () =>
      faultyPlan(
        cleanSmall,
        (p) => (
          (p.mask.keep_sampling_mask = false),
          (p.rollout.async = {
            max_staleness: 1,
            in_flight_updates: true,
            generation: "trainer",
            max_policy_lag: 1,
            past_max_lag: "drop",
          })
        ),
      ),
    runtimeSays: [
      "plan field rollout.async.in_flight_updates",
      "keep_sampling_mask false",
      "async-in-flight-recompute",
    ],
  },
  {
    refusal: "stale groups corrected without a truncated importance weight's cap (mask.tis none)",
    spec: spec("  rollout {\n    async {\n      max_policy_lag: 1\n      past_max_lag: correct\n    }\n  }"),
    at: "past_max_lag: correct",
    code: "async-correct-without-tis",
    plan: () =>
      faultyPlan(
        cleanSmall,
        (p) =>
          (p.rollout.async = {
            max_staleness: 1,
            in_flight_updates: false,
            generation: "trainer",
            max_policy_lag: 1,
            past_max_lag: "correct",
          }),
      ),
    runtimeSays: ["plan field rollout.async.past_max_lag", "mask.tis", "async-correct-without-tis"],
  },
  {
    refusal: "asynchronous rollout k batches ahead whose lag limit drops whole batches (lint rule)",
    spec: spec("  rollout {\n    async {\n      max_staleness: 3\n      max_policy_lag: 1\n    }\n  }"),
    at: "max_staleness: 3",
    code: "staleness-beyond-policy-lag",
    plan: () =>
      faultyPlan(
        cleanSmall,
        (p) =>
          (p.rollout.async = {
            max_staleness: 3,
            in_flight_updates: false,
            generation: "trainer",
            max_policy_lag: 1,
            past_max_lag: "drop",
          }),
      ),
    runtimeSays: ["plan field rollout.async.max_policy_lag", "max_staleness 3", "staleness-beyond-policy-lag"],
  },
  {
    // Was a crash after 1 + retries tries of fetch's "bad port" at the first reset.
    refusal: "an http env on a port fetch refuses (6000)",
    spec: httpSpec("http://127.0.0.1:6000"),
    at: "url:",
    code: "http-env-url",
    plan: () =>
      faultyPlan(
        httpSpec("http://127.0.0.1:8000"),
        (p) => ((p.envs.counter as { url: string }).url = "http://127.0.0.1:6000"),
      ),
    runtimeSays: ["plan field envs.counter.url", "port 6000", "http-env-url"],
  },
  {
    refusal: "an http env URL that is no URL, or holds credentials",
    spec: httpSpec("http://user:pw@127.0.0.1:8000"),
    at: "url:",
    code: "http-env-url",
  },
  {
    // The plan schema requires eval.success: a plan file without one is refused when it is loaded (below).
    refusal: "no success criterion (success was 'total reward > 0')",
    spec: subprocessSpec("", ""),
    at: "experiment e",
    code: "no-success-criterion",
  },
];

describe("refusals of arl run from the plan alone, and their check-time twins", () => {
  it.each(table.map((r) => [r.refusal, r] as const))("%s", async (_name, row) => {
    // Every error is the row's, on the field's line (a fault may show in several fields there).
    const errors = checkErrors(row.spec, row.files);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors).toEqual(errors.map(() => ({ code: row.code, line: lineOf(row.spec, row.at) })));
    if (row.plan) {
      const message = await runtimeRefusal(row.plan());
      for (const part of row.runtimeSays ?? []) expect(message).toContain(part);
    }
  });

  it("the refusals of a plan file that skip the runtime's list: arl run refuses them before writing a run directory", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "arl-refusal-cli-"));
    const write = (name: string, plan: unknown) => (writeFileSync(path.join(cwd, name), JSON.stringify(plan)), name);
    // The model: what the embedded trainer cannot serve.
    const hf = write(
      "hf.plan.json",
      faultyPlan(cleanSmall, (p) => (p.policy.model = "hf:Qwen/Qwen2.5-0.5B")),
    );
    const run = await runArl(["run", hf, "--out", "runs"], { cwd });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("plan field policy.model");
    expect(run.stderr).toContain("local-backend-model");
    expect(existsSync(path.join(cwd, "runs"))).toBe(false);
    // No success criterion: the plan schema requires one.
    const { success: _s, ...evalWithout } = faultyPlan(cleanSmall, () => undefined).eval;
    const without = faultyPlan(cleanSmall, (p) => ((p as { eval: unknown }).eval = evalWithout));
    expect(planSchema.safeParse(without).success).toBe(false);
    const missing = await runArl(["run", write("nosuccess.plan.json", without), "--out", "runs"], { cwd });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("eval.success");
    // A bound: refused when the plan is loaded, naming the field.
    const big = await runArl(
      [
        "run",
        write(
          "big.plan.json",
          faultyPlan(cleanSmall, (p) => (p.rollout.tasks_per_batch = 1e9)),
        ),
        "--out",
        "runs",
      ],
      { cwd },
    );
    expect(big.code).toBe(2);
    expect(big.stderr).toMatch(/above its bound 65536.*at rollout\.tasks_per_batch/);
    expect(readdirSync(cwd).includes("runs")).toBe(false);
  });

  it("a run written before eval.success is refused on --resume by name, and left as it was", async () => {
    const out = mkdtempSync(path.join(tmpdir(), "arl-refusal-resume-"));
    const runDir = RunDirectory.create(
      out,
      faultyPlan(cleanSmall, () => undefined),
    );
    const planFile = path.join(runDir.dir, "plan.json");
    const old = JSON.parse(readFileSync(planFile, "utf8")) as { eval: Record<string, unknown> };
    delete old.eval.success;
    writeFileSync(planFile, JSON.stringify(old));
    const before = readdirSync(runDir.dir).sort();
    const run = await runArl(["run", "--resume", runDir.dir], { cwd: out });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("cannot be resumed by this version");
    expect(run.stderr).toContain("at eval.success");
    expect(readdirSync(runDir.dir).sort()).toEqual(before);
    expect(JSON.parse(readFileSync(planFile, "utf8"))).toEqual(old);
  });

  it("refused at run time: vLLM or SGLang launched for builtin:tiny without --engine-command", async () => {
    const message = await runtimeRefusal(faultyPlan(cleanSmall, (p) => (p.resources.rollout.engine = "vllm")));
    expect(message).toContain("plan field resources.rollout.engine is vllm with launch: true");
    expect(message).toContain('arl run --engine-command "arl serve {plan} --api vllm --port {port}"');
  });

  it("refused at run time: vLLM launched for full-weight sync of a model folder whose config.json ties its embeddings", async () => {
    const model = (tied: boolean) => {
      const dir = mkdtempSync(path.join(tmpdir(), "arl-tied-"));
      writeFileSync(path.join(dir, "config.json"), JSON.stringify({ model_type: "qwen3", tie_word_embeddings: tied }));
      return dir;
    };
    const tied = model(true);
    const message = await runtimeRefusal(
      faultyPlan(cleanSmall, (p) => ((p.resources.rollout.engine = "vllm"), (p.policy.model = tied))),
    );
    expect(message).toContain(
      `plan field policy.model is the folder '${tied}', whose config.json says tie_word_embeddings: true`,
    );
    expect(message).toContain("start a new run from an untied copy of the model");
    expect(message).not.toContain("resume");
    // An untied folder goes on to the launch (no vLLM here), as does a LoRA run of the tied one.
    const untied = await runtimeRefusal(
      faultyPlan(cleanSmall, (p) => ((p.resources.rollout.engine = "vllm"), (p.policy.model = model(false)))),
    );
    expect(untied).not.toContain("tie_word_embeddings");
  });

  it("unreachable from a valid plan: an env kind this runtime cannot run", () => {
    const kinds = planSchema.shape.envs.valueType.options.map((o) => o.shape.kind.value);
    expect([...kinds].sort()).toEqual([...envKinds.keys()].sort());
  });

  it("knows the PyTorch trainer's builtin models and their parameters", () => {
    const source = readFileSync(
      fileURLToPath(new URL("../../runtime-gpu/arl_trainer/qwen2.py", import.meta.url)),
      "utf8",
    );
    const block = (start: string) =>
      source.slice(source.indexOf(start), source.indexOf("\n}\n", source.indexOf(start)));
    const keys = (text: string) => [...text.matchAll(/^\s+"([a-z0-9_.-]+)":/gm)].map((m) => m[1]!);
    expect([...TORCH_BUILTIN_PRESETS].sort()).toEqual([...keys(block("PRESETS: dict")), "qwen2"].sort());
    expect([...TORCH_BUILTIN_PARAMETERS].sort()).toEqual([...keys(block("_SPEC_KEYS = {")), "dtype"].sort());
  });

  it("knows which env kinds have walkthroughs without loading them", () => {
    expect([...KINDS_WITH_WALKTHROUGHS].sort()).toEqual(
      [...envKinds]
        .filter(([, k]) => typeof k.walkthrough === "function")
        .map(([n]) => n)
        .sort(),
    );
  });
});
