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
//
// This file's table holds the splits, the trainers' and models' limits and the algorithm's
// bounds; refusals-rollout.test.ts holds those of rollout, inference servers and envs.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import { KINDS_WITH_WALKTHROUGHS, TORCH_BUILTIN_PARAMETERS, TORCH_BUILTIN_PRESETS } from "../../src/plan/runnable.js";
import { planSchema } from "../../src/plan/schema.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { runArl } from "../helpers/cli.js";
import {
  cleanSmall,
  expectRefusedTwice,
  faultyPlan,
  runtimeRefusal,
  spec,
  subprocessSpec,
  type Row,
} from "../helpers/refusals.js";

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
];

describe("refusals of arl run from the plan alone, and their check-time twins", () => {
  it.each(table.map((r) => [r.refusal, r] as const))("%s", async (_name, row) => {
    await expectRefusedTwice(row);
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
