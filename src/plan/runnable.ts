// What `arl run` refuses from the plan alone, written once: lowering reports each refusal as a
// check diagnostic at the spec field that causes it (`arl check`, `arl plan`, `arl lock`, `arl
// run SPEC`), and the runtime refuses a plan file that has one (a plan file never went through
// the checker) before it starts anything. A refusal the runtime can give that is not here depends
// on more than the plan (the trainer's capabilities, the data, the machine):
// test/plan/refusals.test.ts keeps the table of both.
import { boundMessage, boundViolations } from "./bounds.js";
import { httpEnvUrlProblem } from "./http-url.js";
import { parseTinyModel } from "./model-name.js";
import type { Plan } from "./schema.js";
import { splitSizes, type Split } from "./splits.js";
import { at, defined } from "../contracts/checked.js";
import { hostLibraries } from "../contracts/libraries/index.js";
import type { HostLibrary } from "../contracts/libraries/library.js";
import type { CompilerCode } from "../diagnostics/codes/index.js";

export interface PlanRefusal {
  /** The check diagnostic's code. */
  readonly code: CompilerCode;
  /** The plan field that causes it, e.g. ["envs", "code", "split", "test"]. */
  readonly path: readonly (string | number)[];
  /** Fields it is computed from, where the spec may have written the cause instead (a default split, a resolved batch size). */
  readonly from?: readonly (readonly (string | number)[])[];
  readonly message: string;
  readonly hint: string;
}

/**
 * Env kinds whose runtime implementation has walkthroughs (EnvKind.walkthrough), which
 * rollout.sft replays. Kept here so that checking a spec does not load every env's code; a test
 * compares it with the registry.
 */
export const KINDS_WITH_WALKTHROUGHS: readonly string[] = [
  "findmax",
  "rooms",
  "sql",
  ...hostLibraries.filter((l: HostLibrary) => l.walkthroughs).map((l) => l.kind),
];

export interface RefusalOptions {
  /**
   * The plan's own trainer serves it (the default): what that trainer cannot serve is refused
   * too. False under `--trainer-command`, or in the runtime, which is handed any trainer: the
   * embedded trainer then refuses such a model itself, at configure, before any episode.
   */
  readonly ownTrainer?: boolean;
  /**
   * Whether the machines of a plan on several nodes have a rendezvous: false in `arl run` when no
   * flag or cluster environment names one (such a plan is refused), true when one does. Undefined
   * where no machine is launched (checking, locking): a plan on several nodes is runnable.
   */
  readonly rendezvous?: boolean;
}

export function planRefusals(plan: Plan, options: RefusalOptions = {}): PlanRefusal[] {
  const trainer = options.ownTrainer === false ? [] : [...localBackendModels(plan), ...torchBuiltinModels(plan)];
  return [
    ...boundRefusals(plan),
    ...emptySplits(plan),
    ...trainer,
    ...sftWithoutWalkthroughs(plan),
    ...multiNodeWithoutRendezvous(plan, options.rendezvous),
    ...overlongShaping(plan),
    ...loraReferenceRefresh(plan),
    ...crossPolicyAgents(plan),
    ...engineServerList(plan),
    ...httpEnvUrls(plan),
    ...asyncRefusals(plan),
  ];
}

/** An http env's server URL that no request can reach (not a URL, credentials, a port fetch refuses). */
function httpEnvUrls(plan: Plan): PlanRefusal[] {
  return Object.entries(plan.envs).flatMap(([name, env]) => {
    if (env.kind !== "http" && env.kind !== "agentrl" && env.kind !== "openenv") return [];
    const problem = httpEnvUrlProblem(env.url);
    return problem
      ? [
          {
            code: "http-env-url",
            path: ["envs", name, "url"],
            message: `env '${name}': ${problem.message}`,
            hint: problem.hint,
          },
        ]
      : [];
  });
}

/** The runtime's wording of a refusal: the plan field, what is wrong, what to do, and the check code. */
export function refusalText(r: PlanRefusal): string {
  return `plan field ${r.path.join(".")}: ${r.message}; ${r.hint} (arl check reports this as ${r.code})`;
}

/** Resolved fields: what lowering computes them from. */
const RESOLVED_FROM: Readonly<Record<string, readonly (readonly string[])[]>> = {
  "algorithm.batch_size": [
    ["rollout", "tasks_per_batch"],
    ["algorithm", "group_size"],
  ],
  "eval.samples_per_task": [["eval", "k"]],
};

function boundRefusals(plan: Plan): PlanRefusal[] {
  return boundViolations(plan).map((v) => ({
    code: "value-out-of-bounds",
    path: v.path,
    ...(RESOLVED_FROM[v.field] ? { from: RESOLVED_FROM[v.field] } : {}),
    message: boundMessage(v.path.join("."), v.value, v.bound),
    hint: `use at most ${v.bound.max}; the bounds are in src/plan/bounds.ts`,
  }));
}

/** A split the run uses that holds no task: training samples from train, evaluation from eval.split. */
function emptySplits(plan: Plan): PlanRefusal[] {
  const out: PlanRefusal[] = [];
  const used: { split: Split; why: string }[] = [{ split: "train", why: "training samples its tasks from it" }];
  if (plan.eval.split !== "train")
    used.push({ split: plan.eval.split, why: `eval.split is ${plan.eval.split}: every evaluation would be empty` });
  for (const name of Object.keys(plan.envs).sort()) {
    const env = defined(plan.envs[name], `env ${name}`);
    const sizes = splitSizes(env);
    for (const { split, why } of used) {
      if (sizes[split] > 0) continue;
      const fraction = env.split[split];
      const needed = fraction > 0 ? Math.ceil(1 / fraction) : undefined;
      out.push({
        code: "empty-split",
        path: ["envs", name, "split", split],
        from: [["envs", name, "tasks"]],
        message: `env '${name}': the ${split} split has 0 tasks (tasks ${env.tasks} x split.${split} ${fraction}, rounded down), and ${why}`,
        hint:
          needed !== undefined
            ? `raise tasks to at least ${needed}, or split.${split}`
            : `give split.${split} a fraction above 0`,
      });
    }
  }
  return out;
}

/** The embedded trainer (backend local) serves only builtin:tiny, with its own chat template. */
function localBackendModels(plan: Plan): PlanRefusal[] {
  if (plan.stages.update.backend !== "local") return [];
  const out: PlanRefusal[] = [];
  const hint = 'run it on the PyTorch trainer (resources.backend: torch), or use model "builtin:tiny"';
  const policy = parseTinyModel(plan.policy.model);
  if ("error" in policy)
    out.push({ code: "local-backend-model", path: ["policy", "model"], message: policy.error, hint });
  if (plan.policy.chat_template !== null && plan.policy.chat_template !== "builtin") {
    out.push({
      code: "local-backend-model",
      path: ["policy", "chat_template"],
      message: `the embedded trainer (backend local) has only builtin:tiny's own chat template, not '${plan.policy.chat_template}'`,
      hint: "remove chat_template, or run on the PyTorch trainer (resources.backend: torch)",
    });
  }
  if (plan.policy.lora !== null) {
    out.push({
      code: "local-backend-model",
      path: ["policy", "lora"],
      message: "the embedded trainer (backend local) trains all of builtin:tiny's weights and has no LoRA adapters",
      hint: "remove lora, or run on the PyTorch trainer (resources.backend: torch)",
    });
  }
  if (plan.policy.dtype !== "float32") {
    out.push({
      code: "local-backend-model",
      path: ["policy", "dtype"],
      message: `the embedded trainer (backend local) stores float32 weights only, not ${plan.policy.dtype}`,
      hint: "remove dtype, or run on the PyTorch trainer (resources.backend: torch)",
    });
  }
  // Cross-policy pool models are not checked here: they are served by whatever trainer command
  // runs (test doubles name their own), and the trainer refuses one it cannot serve at configure.
  return out;
}

/**
 * The PyTorch trainer's builtin models and their shape parameters (runtime-gpu/arl_trainer/
 * qwen2.py, PRESETS and _SPEC_KEYS; a test compares), so that check knows which names it refuses.
 */
export const TORCH_BUILTIN_PRESETS: readonly string[] = ["qwen2", "qwen2-0.5b", "small", "tiny"];
export const TORCH_BUILTIN_PARAMETERS: readonly string[] = [
  "bias",
  "dtype",
  "eps",
  "heads",
  "hidden",
  "intermediate",
  "kv_heads",
  "layers",
  "max_positions",
  "rope_theta",
  "tie",
  "vocab",
];

function torchBuiltinModels(plan: Plan): PlanRefusal[] {
  const model = plan.policy.model;
  if (plan.stages.update.backend !== "torch" || !model.startsWith("builtin:")) return [];
  const [name = "", query = ""] = model.slice("builtin:".length).split("?", 2);
  const refuse = (message: string, hint: string): PlanRefusal[] => [
    { code: "torch-backend-model", path: ["policy", "model"], message, hint },
  ];
  if (!TORCH_BUILTIN_PRESETS.includes(name)) {
    return refuse(
      `the PyTorch trainer (backend torch) has no builtin model '${name}' (known: ${TORCH_BUILTIN_PRESETS.join(", ")})`,
      "use one of them, an hf: model or a local path",
    );
  }
  const unknown = query
    .split("&")
    .filter(Boolean)
    .map((pair) => at(pair.split("="), 0))
    .filter((key) => !TORCH_BUILTIN_PARAMETERS.includes(key));
  if (unknown.length === 0) return [];
  return refuse(
    `the PyTorch trainer's builtin models take no parameter ${unknown.map((k) => `'${k}'`).join(", ")} (known: ${TORCH_BUILTIN_PARAMETERS.join(", ")})`,
    "the embedded model's embed and key parameters exist on backend local only",
  );
}

function sftWithoutWalkthroughs(plan: Plan): PlanRefusal[] {
  // Records alone (sft.data without demos) replay no walkthrough.
  if (!plan.rollout.sft || plan.rollout.sft.demos === null) return [];
  const lacking = Object.keys(plan.envs)
    .sort()
    .filter((name) => !KINDS_WITH_WALKTHROUGHS.includes(defined(plan.envs[name], `env ${name}`).kind));
  return lacking.map((name) => ({
    code: "sft-without-walkthroughs",
    path: ["rollout", "sft"],
    message: `rollout.sft.demos replays env walkthroughs, and env '${name}' is of kind '${defined(plan.envs[name], `env ${name}`).kind}', which provides none`,
    hint: `remove sft.demos and cold-start on your own records (sft { data: "./records.jsonl" }), or cold-start only on envs of kind ${KINDS_WITH_WALKTHROUGHS.join(", ")}`,
  }));
}

/**
 * DAPO's overlong reward shaping is part of the language and the plan, but the runtime's rewards
 * do not apply it yet: running such a plan would train without the penalty it names.
 */
function overlongShaping(plan: Plan): PlanRefusal[] {
  if (!plan.algorithm.overlong) return [];
  return [
    {
      code: "overlong-unsupported",
      path: ["algorithm", "overlong"],
      message: `algorithm.overlong asks for a soft length penalty (buffer ${plan.algorithm.overlong.buffer} tokens, penalty ${plan.algorithm.overlong.penalty}), which this runtime's rewards do not apply yet; the run would train without it`,
      hint: "write algorithm.overlong: none (or a length term in the reward block) to train without it knowingly",
    },
  ];
}

/** An agent program's calls go through the gateway, which serves the policy alone: no pool model would generate a turn. */
function crossPolicyAgents(plan: Plan): PlanRefusal[] {
  if (!plan.rollout.cross_policy) return [];
  const agents = Object.keys(plan.envs)
    .sort()
    .filter((name) => defined(plan.envs[name], `env ${name}`).kind === "agent");
  return agents.map((name) => ({
    code: "cross-policy-agent",
    path: ["rollout", "cross_policy"],
    from: [["envs", name, "kind"]],
    message: `rollout.cross_policy mixes pool models into episodes, and env '${name}' is an agent program whose calls the gateway serves from the policy alone: no pool model would generate a turn`,
    hint: "remove rollout.cross_policy, or train the agent env in an experiment of its own",
  }));
}

/**
 * An inference engine's servers are either launched by the runtime or the ones at `urls`, one
 * URL per server: both, or a count that disagrees, leaves the runtime to guess which were meant.
 */
function engineServerList(plan: Plan): PlanRefusal[] {
  const r = plan.resources.rollout;
  if (r.engine === "trainer") return [];
  const refuse = (path: string[], message: string, hint: string, from?: string[]): PlanRefusal[] => [
    {
      code: "engine-servers",
      path: ["resources", "rollout", ...path],
      ...(from ? { from: [["resources", "rollout", ...from]] } : {}),
      message,
      hint,
    },
  ];
  if (r.launch && r.urls.length > 0) {
    return refuse(
      ["urls"],
      `resources.rollout.urls names ${r.urls.length} server${r.urls.length === 1 ? "" : "s"}, and launch is true: the runtime would start servers of its own and never use them`,
      "write launch: false to use the servers at urls, or remove urls to have the runtime start them",
      ["launch"],
    );
  }
  if (!r.launch && r.urls.length === 0) {
    return refuse(
      ["launch"],
      `resources.rollout.launch is false (the servers are yours), and urls names none: there is no server to send a generation to`,
      `list the servers' base URLs in urls (urls: ["http://host:8000"]), or write launch: true to have the runtime start them`,
      ["urls"],
    );
  }
  if (!r.launch && r.servers !== r.urls.length) {
    return refuse(
      ["servers"],
      `resources.rollout.servers is ${r.servers}, and urls names ${r.urls.length} server${r.urls.length === 1 ? "" : "s"}: with launch: false each server is one URL`,
      `write servers: ${r.urls.length}, or list ${r.servers} URLs`,
      ["urls"],
    );
  }
  return [];
}

/** Under LoRA the reference is the base model (the policy with its adapters disabled): there is no copy to refresh. */
function loraReferenceRefresh(plan: Plan): PlanRefusal[] {
  const reference = plan.algorithm.kl.reference;
  if (plan.policy.lora === null || reference?.kind !== "refresh") return [];
  return [
    {
      code: "lora-reference-refresh",
      path: ["algorithm", "kl", "reference"],
      from: [["policy", "lora"]],
      message: `kl.reference refresh(${reference.every}) with policy.lora: the reference of LoRA training is the base model (the adapters disabled), which is never refreshed`,
      hint: "use kl.reference: initial, or train all the weights (remove policy.lora)",
    },
  ];
}

/** torchrun is started with --nnodes but no rendezvous: the other machines would never join. */
function multiNodeWithoutRendezvous(plan: Plan, rendezvous: boolean | undefined): PlanRefusal[] {
  if (plan.stages.update.nodes <= 1 || rendezvous !== false) return [];
  return [
    {
      code: "multi-node-unsupported",
      path: ["resources", "nodes"],
      message: `resources.nodes is ${plan.stages.update.nodes}, and no rendezvous names where the machines meet (no --node-rank/--rdzv-endpoint, no SLURM_NODEID and SLURM_JOB_NODELIST, no NODE_RANK and MASTER_ADDR)`,
      hint: "run arl run on every machine with --node-rank R --rdzv-endpoint NODE0_HOST:PORT (or under srun in a SLURM job; docs/distributed.md), or use resources.nodes: 1",
    },
  ];
}

/**
 * What asynchronous rollout beyond one batch ahead cannot run with (docs/semantics.md §7): an
 * engine, a recompute under in-flight updates, a correction without its cap.
 */
function asyncRefusals(plan: Plan): PlanRefusal[] {
  const a = plan.rollout.async;
  if (a === null) return [];
  const out: PlanRefusal[] = [];
  const at = (field: string) => ["rollout", "async", field];
  const beyondOne = a.max_staleness > 1 || a.in_flight_updates;
  // An engine's servers hold one version, synced where the snapshot is taken; batches from
  // several snapshots at once, or an episode that changes weights mid-flight, would need them to
  // serve several versions or to be synced under a generation.
  if (beyondOne && plan.resources.rollout.engine !== "trainer") {
    out.push({
      code: "async-engine",
      path: a.in_flight_updates ? at("in_flight_updates") : at("max_staleness"),
      from: [["resources", "rollout", "engine"]],
      message: `rollout.async beyond one batch ahead (max_staleness ${a.max_staleness}${a.in_flight_updates ? ", in_flight_updates" : ""}) with engine ${plan.resources.rollout.engine}: its servers serve one policy version at a time`,
      hint: "use max_staleness: 1 without in_flight_updates with an engine, or let the trainer generate (resources.rollout.engine: trainer)",
    });
  }
  // In flight, the snapshot moves on under an episode, so no one set of weights can recompute its
  // behaviour log-probs: each token's sampled log-prob is the ratio's denominator, which is the
  // update's distribution only with the keep-sampling mask.
  if (a.in_flight_updates && !plan.mask.keep_sampling_mask) {
    out.push({
      code: "async-in-flight-recompute",
      path: at("in_flight_updates"),
      from: [["mask", "keep_sampling_mask"]],
      message:
        "rollout.async.in_flight_updates with mask.keep_sampling_mask false: the behaviour log-probs would have to be recomputed under the full distribution by the weights that sampled each token, and the snapshot has moved on since",
      hint: "keep the sampling mask on (mask.keep_sampling_mask: true), or remove in_flight_updates",
    });
  }
  if (a.past_max_lag === "correct" && plan.mask.tis === null) {
    out.push({
      code: "async-correct-without-tis",
      path: at("past_max_lag"),
      from: [["mask", "tis"]],
      message:
        "rollout.async.past_max_lag correct weights each token of a stale group by a truncated importance weight, and mask.tis (its cap) is none",
      hint: "set mask { tis { cap: 2, level: token } }, or drop stale groups (past_max_lag: drop)",
    });
  }
  // The replica is one more process of the trainer's own command: with servers, they already
  // generate apart from the trainer; a sharded trainer's command is a torchrun group, not one process.
  if (a.generation === "replica" && plan.resources.rollout.engine !== "trainer") {
    out.push({
      code: "async-replica-engine",
      path: at("generation"),
      from: [["resources", "rollout", "engine"]],
      message: `rollout.async.generation replica with engine ${plan.resources.rollout.engine}: the servers already generate apart from the trainer`,
      hint: "remove generation: replica (the servers are the behaviour policy), or let a replica generate (resources.rollout.engine: trainer)",
    });
  }
  if (a.generation === "replica" && plan.stages.update.processes > 1) {
    out.push({
      code: "async-replica-processes",
      path: at("generation"),
      from: [["resources", "gpus"]],
      message: `rollout.async.generation replica with a trainer of ${plan.stages.update.processes} processes: the replica is one process holding the whole policy, started by the trainer's own command`,
      hint: "generate on inference servers (resources.rollout.engine: vllm or sglang), or train in one process (resources.gpus: 1)",
    });
  }
  return out;
}
