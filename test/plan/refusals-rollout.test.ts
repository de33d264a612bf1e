// Refusals of arl run from the plan alone and their check-time twins (the table's method:
// refusals.test.ts) for rollout, inference servers and envs: asynchronous rollout and its lag,
// KL references, cross-policy sampling, inference servers, generation replicas, stale groups,
// http env URLs and the success criterion.
import { describe, it } from "vitest";
import { COUNTER_SIGNALS_AND_TOOLS } from "../helpers/plans.js";
import { cleanSmall, expectRefusedTwice, faultyPlan, spec, subprocessSpec, type Row } from "../helpers/refusals.js";

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
    await expectRefusedTwice(row);
  });
});
