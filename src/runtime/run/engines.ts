// The run's inference servers (resources.rollout.engine vllm or sglang; docs/engines.md): started
// or connected at provision, synced to the trainer's weights before the first rollout and after
// every update (or, under rollout.async, where the behaviour snapshot is taken), and given up
// with a resumable error once none is left. `engine: trainer` runs have none of this.
import { existsSync } from "node:fs";
import path from "node:path";
import type { Plan } from "../../plan/schema.js";
import { EnginePolicy } from "../../inference/engine/engine-policy.js";
import { EngineLaunchError, engineModel, LaunchedServers } from "../../inference/engine/launch.js";
import { EnginePool } from "../../inference/engine/pool.js";
import { RunEngine } from "../../inference/engine/run-engine.js";
import { SYNC_PROBE_TEXT, tiesEmbeddings, type SyncProbeSettings } from "../../inference/engine/sync-probe.js";
import { WeightSync, WeightSyncError } from "../../inference/engine/weight-sync.js";
import { engineWire } from "../../inference/engine/wires.js";
import type { TrainerPolicy, TrainerRequests } from "../../episode/policy.js";
import { refusal, RunError, type RunContext, type RunOptions } from "./context.js";
import type { RunTrainers } from "./trainers.js";

/** Whether generations go to inference servers rather than the trainer. */
export function usesEngine(plan: Plan): boolean {
  return plan.resources.rollout.engine !== "trainer";
}

/** What to do about a model with tied embeddings on vLLM: a resume would meet the same server. */
const TIED_HINT =
  "start a new run from an untied copy of the model (its lm_head.weight written out, tie_word_embeddings: false in config.json), " +
  'or serve it with an engine whose weight reload updates a tied lm_head (ARL\'s own engine mode: --engine-command "arl serve {plan} --api vllm --port {port}")';

/**
 * What the runtime refuses beyond the plan (plan/runnable.ts has the plan's own faults, from the
 * plan alone; these read the machine): launching vLLM or SGLang for builtin:tiny, which only
 * ARL's trainers can build, unless --engine-command names a server that can (arl serve); and
 * launching vLLM for full-weight sync of a model folder whose config.json ties its embeddings:
 * vLLM's reload keeps the launched lm_head (docs/engines.md, "The sync probe"), and in bfloat16 a
 * small update can stay under the probe's tolerance, so the run would train on a mixed model.
 */
export function checkEngineRunnable(plan: Plan, engineCommand: string | undefined): void {
  const rollout = plan.resources.rollout;
  if (rollout.engine === "trainer" || !rollout.launch || engineCommand) return;
  const model = engineModel(plan);
  if (rollout.engine === "vllm" && plan.policy.lora === null && existsSync(model) && tiesEmbeddings(model)) {
    throw refusal(
      `plan field policy.model is the folder '${model}', whose config.json says tie_word_embeddings: true, and resources.rollout.engine is vllm with full-weight sync: ` +
        `vLLM's weight reload keeps a tied lm_head as launched, so the servers would serve the new body under the old head; ${TIED_HINT}; or train a LoRA adapter (policy.lora), which leaves the head alone`,
    );
  }
  if (plan.policy.model.startsWith("builtin:")) {
    throw refusal(
      `plan field resources.rollout.engine is ${rollout.engine} with launch: true, and ${rollout.engine} cannot serve '${plan.policy.model}' (ARL's embedded model exists in ARL's trainers only); ` +
        `serve it with ARL's own engine-mode server: arl run --engine-command "arl serve {plan} --api ${rollout.engine} --port {port}", or sample with engine: trainer`,
    );
  }
}

/** The metrics and messages' one line about the servers. */
function serverLine(engine: RunEngine, plan: Plan): string {
  const rollout = plan.resources.rollout;
  const how = engine.launched ? "launched" : "connected";
  const servers = engine.pool.servers.map((s) => {
    const launched = engine.launched?.servers[s.index];
    return launched
      ? `${s.url} (pid ${launched.pid ?? "?"}, GPUs ${launched.devices || "none"}, log ${path.basename(launched.log)})`
      : s.url;
  });
  return `${rollout.engine}: ${how} ${servers.length} inference server${servers.length === 1 ? "" : "s"}: ${servers.join(", ")}`;
}

/**
 * Starts (launch: true) or connects to (urls) the plan's servers and returns the run's engine;
 * launched servers are handed to `trainers` at once, so that a later failure stops them. The
 * first weight sync is the caller's (syncEngine), once the trainer's weights are final.
 */
export async function startEngine(
  options: RunOptions,
  trainer: TrainerRequests,
  tokenizer: TrainerPolicy,
  trainers: RunTrainers,
): Promise<RunEngine> {
  const { plan, runDir, log } = options;
  const rollout = plan.resources.rollout;
  if (rollout.engine === "trainer") throw new Error("startEngine: the plan samples with its trainer");
  const wire = engineWire(rollout.engine);
  let launched: LaunchedServers | undefined;
  if (rollout.launch) {
    try {
      launched = await LaunchedServers.start({
        plan,
        wire,
        runDir: runDir.dir,
        engineCommand: options.engineCommand,
        enginePython: options.enginePython,
        planFile: path.join(runDir.dir, "plan.json"),
        halt: options.halt,
      });
    } catch (error) {
      if (error instanceof EngineLaunchError)
        throw new RunError(`could not start the inference servers: ${error.message}`);
      throw error;
    }
    trainers.adoptEngineServers(launched);
  }
  const urls = launched ? launched.servers.map((s) => s.url) : rollout.urls;
  const pool = new EnginePool(wire, urls, {
    requestTimeoutS: rollout.request_timeout_s,
    maxRetries: rollout.max_retries,
    model: engineModel(plan),
    lora: plan.policy.lora !== null,
    log,
  });
  if (!launched) {
    // Servers the user runs: one that does not answer now is out from the start.
    await Promise.all(
      pool.servers.map(async (server) => {
        const health = await pool.healthy(server);
        if (!health.ok) pool.markDead(server, `its health check failed at the start: ${health.error}`);
      }),
    );
    if (pool.live().length === 0)
      throw new RunError(
        `none of the inference servers at resources.rollout.urls answers its health check: ${pool.deadSummary()}`,
      );
  }
  const engine = new RunEngine(
    pool,
    new EnginePolicy(tokenizer, pool),
    new WeightSync(trainer, pool, runDir.dir, plan.policy.lora !== null, await syncProbe(plan, tokenizer)),
    launched,
  );
  log(serverLine(engine, plan));
  return engine;
}

/** The plan's sync probe with its prompt in the trainer's tokens; null when the plan turns it off. */
async function syncProbe(plan: Plan, tokenizer: TrainerPolicy): Promise<SyncProbeSettings | null> {
  const { tolerance } = plan.resources.rollout.sync_probe;
  // No more than a rollout generation: a server may refuse longer ones (arl serve does).
  const tokens = Math.min(plan.resources.rollout.sync_probe.tokens, plan.policy.sampling.max_new_tokens);
  if (tokens === 0) return null;
  const parts = await tokenizer.encode([{ role: "user", content: SYNC_PROBE_TEXT }], true);
  const prompt = new Int32Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (prompt.set(p, at), at + p.length), 0);
  return {
    tokens,
    tolerance,
    prompt,
    seed: plan.seed,
    model: engineModel(plan),
    lora: plan.policy.lora !== null,
    dtype: plan.policy.dtype,
  };
}

/** Syncs the servers to the trainer's policy version `version`; a run with no server left stops, resumable. */
export async function syncEngine(ctx: Pick<RunContext, "engine">, version: number): Promise<void> {
  if (!ctx.engine) return;
  try {
    await ctx.engine.weights.sync(version);
  } catch (error) {
    if (error instanceof WeightSyncError && error.tied) throw refusal(`${error.message}; ${TIED_HINT}`);
    if (error instanceof WeightSyncError)
      throw new RunError(
        `${error.message}; resume once the servers are back (arl run --resume starts or connects them again)`,
      );
    throw error;
  }
}

/** After a phase that generated: with every server gone, the run stops (resumable) rather than play on in env errors. */
export function requireServing(ctx: Pick<RunContext, "engine">): void {
  const pool = ctx.engine?.pool;
  if (!pool || pool.live().length > 0) return;
  throw new RunError(
    `every inference server is out: ${pool.deadSummary()}; resume once they are back (arl run --resume starts or connects them again)`,
  );
}
