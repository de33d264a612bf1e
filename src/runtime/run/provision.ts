// Provision: everything a run needs before its first episode. Refuse a plan this runtime cannot
// run (before anything starts), recover the run directory's committed state, open the buffer,
// start and configure the trainers (loading the checkpoint on resume) and write the manifest.
import path from "node:path";
import { EnvError } from "../../contracts/env.js";
import type { Plan } from "../../plan/schema.js";
import type { ConfigureParams, ConfigureResult } from "../../contracts/trainer-protocol.js";
import { planRefusals, refusalText } from "../../plan/runnable.js";
import { arlVersion } from "../../plan/version.js";
import { updateSteps } from "../../rl/lag.js";
import { TrainerClient, TrainerError, type TrainerCommand } from "../../trainer/protocol/client.js";
import { TokenBuffer } from "../../episode/buffer.js";
import { PoolTrainers } from "../../episode/cross-policy.js";
import { DEFAULT_TEMPLATE } from "../../episode/conversation.js";
import { maxTokenBytes } from "../../inference/gateway/prompt-bound.js";
import { startGateway } from "../../inference/gateway/server.js";
import { harnessVocabulary } from "../../episode/harness.js";
import { TrainerPolicy } from "../../episode/policy.js";
import { ENGINES_DIR, type LaunchedServer } from "../../inference/engine/launch.js";
import type { RunState } from "../run-dir.js";
import { loadSftData, SftDataError, sftDataSource, sftVocabulary, type SftData } from "./cold-start/data.js";
import { ToolCallValidator } from "../../contracts/tool-calls.js";
import { trainerDeadlines } from "../../trainer/launch.js";
import {
  envKindOf,
  envNames,
  haltedError,
  planEnv,
  refusal,
  RunError,
  type EnvRegistry,
  type RunContext,
  type RunOptions,
} from "./context.js";
import { EpisodeLanes } from "./lanes.js";
import { RunStreams } from "./streams.js";
import { RunTracking } from "./tracking.js";
import { RunTrainers } from "./trainers.js";
import { GenerationReplica, shareCpuThreads } from "./replica.js";
import { checkEngineRunnable, startEngine, syncEngine, usesEngine } from "./engines.js";

/**
 * Asynchronous rollout pipelined k batches ahead (rollout.async.max_staleness) makes the oldest
 * batch of each snapshot as old, at its update, as the optimizer steps of the k updates before it
 * (k = 1: one batch ahead). When that exceeds max_policy_lag and stale groups are dropped, those
 * batches would lose every sample: refuse the plan (lint rules policy-lag-below-update-steps and
 * staleness-beyond-policy-lag say the same at compile time; a plan file skips the linter).
 */
function checkPipelineLag(plan: Plan): void {
  const async = plan.rollout.async;
  const lag = async?.max_policy_lag;
  if (!async || lag === undefined || lag === null || async.past_max_lag === "correct") return;
  const a = plan.algorithm;
  const steps = updateSteps(a.epochs, a.minibatches, plan.rollout.tasks_per_batch * a.group_size);
  const k = async.max_staleness;
  if (k * steps <= lag) return;
  if (k === 1) {
    throw refusal(
      `plan field rollout.async.max_policy_lag is ${lag}, but with rollout pipelined one batch ahead every sample is ${steps} policy versions old when its update starts ` +
        `(algorithm.epochs ${a.epochs} x ${steps / a.epochs} minibatch steps of the update before it): every sample after the first iteration would be dropped and nothing trained. ` +
        `Raise max_policy_lag to ${steps}, or take fewer optimizer steps per update (arl check reports this as policy-lag-below-update-steps)`,
    );
  }
  throw refusal(
    `plan field rollout.async.max_policy_lag is ${lag}, but with rollout.async.max_staleness ${k} the oldest batch of each snapshot is ${k} updates of ${steps} optimizer steps (${k * steps} policy versions) old when its update starts: ` +
      `those batches would be dropped whole and nothing trained on them. Raise max_policy_lag to ${k * steps}, lower max_staleness to ${Math.max(1, Math.floor(lag / steps))}, or keep and correct them (past_max_lag: correct) ` +
      `(arl check reports this as staleness-beyond-policy-lag)`,
  );
}

/** What the manifest records of a launched server. */
function launchRecord(server: LaunchedServer | undefined): Record<string, unknown> {
  return server
    ? {
        pid: server.pid ?? null,
        command: server.command,
        cuda_visible_devices: server.devices,
        log: `${ENGINES_DIR}/${path.basename(server.log)}`,
      }
    : {};
}

/** Answers of a trainer to `configure` that say the plan itself is the problem (not a crash or a timeout). */
const TRAINER_REFUSALS: ReadonlySet<TrainerError["code"]> = new Set<TrainerError["code"]>([
  "invalid_request",
  "unsupported",
  "out_of_memory",
]);

/** Whether `state` has committed anything a resume would continue from (the cold start's steps included). */
function hasProgress(state: RunState): boolean {
  return state.iteration > 0 || state.sftDone || state.checkpoint !== null;
}

/** Asynchronous rollout needs the behaviour-policy snapshot of the trainer protocol. */
function requireBehaviourPolicy(trainer: TrainerClient): void {
  const hello = trainer.handshakeResult;
  if (hello?.capabilities.behaviour_policy === true && hello.capabilities.methods.includes("snapshot")) return;
  throw refusal(
    `rollout.async needs a trainer that keeps a behaviour-policy snapshot (capability behaviour_policy and method snapshot, trainer protocol "Behaviour policy"), ` +
      `and trainer '${hello?.trainer.name ?? "?"}' ${hello?.trainer.version ?? ""} does not announce it; run synchronously (remove rollout.async) or use a trainer that has it (the embedded and PyTorch trainers do)`,
  );
}

/** mask.tis sends importance weights with every train_step: a trainer that would ignore them must say it takes them. */
function requireImportanceWeights(trainer: TrainerClient): void {
  const hello = trainer.handshakeResult;
  if (hello?.capabilities.is_weights === true) return;
  throw refusal(
    `mask.tis needs a trainer that weights each token's policy-gradient term (capability is_weights, trainer protocol train_step), ` +
      `and trainer '${hello?.trainer.name ?? "?"}' ${hello?.trainer.version ?? ""} does not announce it; remove mask.tis or use a trainer that has it (the embedded and PyTorch trainers do)`,
  );
}

/** rollout.sft.optimizer fresh resets the optimizers after the cold start: a trainer without reset_optimizer would fail only then. */
function requireOptimizerReset(trainer: TrainerClient): void {
  const hello = trainer.handshakeResult;
  if (hello?.capabilities.methods.includes("reset_optimizer") === true) return;
  throw refusal(
    `rollout.sft.optimizer fresh starts RL with a fresh optimizer after the cold start (trainer protocol method reset_optimizer), ` +
      `and trainer '${hello?.trainer.name ?? "?"}' ${hello?.trainer.version ?? ""} does not announce it; set rollout.sft.optimizer: continue to keep the cold start's optimizer state, or use a trainer that has it (the embedded and PyTorch trainers do)`,
  );
}

/**
 * Refuses what this runtime cannot run, before anything starts: what arl check reports
 * (plan/runnable.ts; a plan file skips the checker), env kinds it does not have, and a pipeline
 * that would drop every sample. The trainer is whatever command was handed over; the embedded
 * one refuses models itself.
 */
export function checkRunnable(plan: Plan, envs: EnvRegistry, engineCommand?: string): void {
  const refusals = planRefusals(plan, { ownTrainer: false });
  if (refusals.length > 0) throw refusal(refusals.map(refusalText).join("\n"));
  for (const [name, env] of Object.entries(plan.envs)) {
    if (!envs.has(env.kind))
      throw refusal(
        `env '${name}' is of kind '${env.kind}', which this runtime cannot run yet (available: ${[...envs.keys()].join(", ") || "none"})`,
      );
  }
  checkPipelineLag(plan);
  checkEngineRunnable(plan, engineCommand);
}

/**
 * What this machine lacks for the plan's envs (EnvKind.hostCheck), at run start: a refusal stops
 * the run before anything is written, a warning goes to the run log.
 */
export async function checkHost(plan: Plan, envs: EnvRegistry, log: (line: string) => void): Promise<void> {
  for (const name of envNames(plan)) {
    const env = planEnv(plan, name);
    const check = await envKindOf(envs, env).hostCheck?.(env);
    if (check?.refusal !== undefined) throw refusal(`env '${name}' (${env.kind}): ${check.refusal}`);
    if (check?.warning !== undefined) log(`WARNING: env '${name}' (${env.kind}): ${check.warning}`);
  }
}

/** rollout.sft.data's records, or undefined without one; a bad file is a RunError naming file:line. */
export function loadColdStartData(plan: Plan, root: string | undefined): SftData | undefined {
  const source = sftDataSource(plan);
  if (source === null) return undefined;
  try {
    return loadSftData(source, root);
  } catch (error) {
    if (error instanceof SftDataError) throw refusal(error.message);
    throw error;
  }
}

/** The words of `plan`'s harness, envs and cold-start records: the embedded model's vocabulary (the same words give the same model, so a run's checkpoints load into it). */
export function planVocabulary(plan: Plan, envs: EnvRegistry, sftData: SftData | undefined): string[] {
  const envWords = envNames(plan).flatMap((n) => {
    const env = planEnv(plan, n);
    return [...envKindOf(envs, env).vocabulary(env)];
  });
  return [...new Set([...harnessVocabulary(plan), ...envWords, ...(sftData ? sftVocabulary(sftData) : [])])].sort();
}

/** The configure request of `plan`'s policy trainer. */
export function configureParams(plan: Plan, vocabulary: readonly string[], behaviourPolicy: boolean): ConfigureParams {
  return {
    seed: plan.seed,
    policy: plan.policy,
    algorithm: {
      optimizer: plan.algorithm.optimizer,
      critic: plan.algorithm.critic,
      clip: plan.algorithm.clip,
      kl: plan.algorithm.kl,
    },
    vocabulary: [...vocabulary],
    ...(behaviourPolicy ? { behaviour_policy: true } : {}),
  };
}

/**
 * Configures the policy's trainer for `plan` (a run's provision, and `arl serve`); the trainer's
 * refusal of the plan (a model it cannot load, an option it lacks) is a refusal of the run.
 */
export async function configureTrainer(
  trainer: TrainerClient,
  plan: Plan,
  vocabulary: readonly string[],
  behaviourPolicy: boolean,
): Promise<ConfigureResult> {
  return trainer.request("configure", configureParams(plan, vocabulary, behaviourPolicy)).catch((error: unknown) => {
    // The trainer's answer to this plan would be the same on a resume.
    if (error instanceof TrainerError && TRAINER_REFUSALS.has(error.code))
      throw refusal(`the trainer refused the plan's configuration: ${error.message}`, error.stderrTail);
    throw error;
  });
}

/**
 * Each env kind's own preparation (a dataset's rows checked, its verifier loaded in the env
 * host), before the trainer is configured. Its failure names the file or row; a run with nothing
 * committed is refused, a resumed one stays resumable (a missing Python package can be installed).
 */
async function provisionEnvs(
  plan: Plan,
  envs: EnvRegistry,
  runDir: string,
  log: (line: string) => void,
  state: RunState,
): Promise<void> {
  for (const [name, env] of Object.entries(plan.envs)) {
    try {
      const tools = plan.tools.filter((t) => t.env === name).map((t) => t.definition.function);
      await envKindOf(envs, env).provision?.(env, { name, tools, runDir, log, concurrency: plan.rollout.concurrency });
    } catch (error) {
      if (!(error instanceof EnvError)) throw error;
      throw hasProgress(state) ? new RunError(error.message) : refusal(error.message);
    }
  }
}

/** Stops what the env kinds' provision started (env hosts); never throws. */
export async function shutdownEnvs(envs: EnvRegistry): Promise<void> {
  await Promise.all(
    [...envs.values()].map((kind) => (kind.shutdown ? kind.shutdown().catch(() => undefined) : Promise.resolve())),
  );
}

/** A run directory recovered to its committed state, its buffer open and the policy's trainer started. */
export interface OpenedRun {
  /** The committed state, its checkpoint as found in this directory (resume). */
  readonly state: RunState;
  readonly buffer: TokenBuffer;
  readonly trainers: RunTrainers;
  /** The policy's trainer command with its request deadlines; the pool's trainers run the same. */
  readonly trainerCommand: TrainerCommand;
}

/** Recovers the run directory, opens the buffer and starts the policy's trainer; on failure, nothing is left open. */
export async function openRun(options: RunOptions): Promise<OpenedRun> {
  const { plan, runDir, log } = options;
  const { failed, ...committed } = runDir.readState();
  const recovered = runDir.recover(committed, log);
  // A failure recorded by the last attempt is that attempt's: this one plays its batch again.
  if (failed !== undefined) log(`the last attempt failed: ${failed.split("\n")[0] ?? ""}; playing its batch again`);
  const state: RunState = { ...committed, checkpoint: recovered.checkpoint };
  const trainerCommand: TrainerCommand = shareCpuThreads(plan, {
    ...options.trainer,
    deadlineMs: options.trainer.deadlineMs ?? trainerDeadlines(plan, options.trainerTimeoutS),
  });
  if (options.halt?.aborted) throw haltedError(state);
  const buffer = new TokenBuffer(runDir.bufferPath, recovered.buffer.bytes, recovered.buffer);
  const trainer = await TrainerClient.start(trainerCommand, arlVersion(), options.halt).catch(
    (e: Error & { stderrTail?: string[] }) => {
      buffer.close();
      if (options.halt?.aborted) throw haltedError(state);
      // Before anything was committed there is nothing to resume: the same start would fail again.
      const message = `could not start the trainer: ${e.message}`;
      throw hasProgress(state) ? new RunError(message, e.stderrTail ?? []) : refusal(message, e.stderrTail ?? []);
    },
  );
  return { state, buffer, trainers: new RunTrainers(trainer), trainerCommand };
}

/** The run's context, and the trainer's policy version once configured (and loaded on resume). */
export interface Provisioned {
  readonly ctx: RunContext;
  readonly version: number;
}

/**
 * Configures the policy's trainer (loading the committed checkpoint on resume), starts the
 * pool's trainers and writes the manifest. A pool started here is handed to `opened.trainers`
 * at once: the caller stops every started process when anything after fails.
 */
export async function provision(options: RunOptions, opened: OpenedRun): Promise<Provisioned> {
  const { plan, runDir, log } = options;
  const { state, trainers } = opened;
  const trainer = trainers.main;
  const asyncRollout = plan.rollout.async;
  const policy = new TrainerPolicy(trainer);
  if (asyncRollout) requireBehaviourPolicy(trainer);
  if (plan.mask.tis) requireImportanceWeights(trainer);
  if (plan.rollout.sft?.optimizer === "fresh" && !state.sftDone) requireOptimizerReset(trainer);
  // Read and validated before anything trains; the embedded model's vocabulary sees its words.
  const sftData = loadColdStartData(plan, options.dataRoot);
  await provisionEnvs(plan, options.envs, runDir.dir, log, state);
  const vocabulary = planVocabulary(plan, options.envs, sftData);
  const behaviourPolicy = asyncRollout !== null && asyncRollout !== undefined;
  const configured = await configureTrainer(trainer, plan, vocabulary, behaviourPolicy);
  // The trainer's policy version, followed through load, SFT and every train step: the
  // version at an update, from which sample lags are measured.
  let version = configured.policy_version;
  if (state.checkpoint) {
    version = (await trainer.request("load", { path: state.checkpoint })).policy_version;
    log(
      state.sftProgress
        ? `resumed the cold start after its step ${state.sftProgress.step} from ${state.checkpoint}`
        : `resumed after iteration ${state.iteration} from ${state.checkpoint}`,
    );
  }
  const template = configured.tokenizer.template ?? DEFAULT_TEMPLATE;
  if (!template.prefix_preserving && plan.harness.context.history === "exact") {
    log(
      `note: the chat template of '${plan.policy.model}' is not prefix-preserving (rendering one more turn rewrites the earlier ones), and harness.context.history is exact: ` +
        "training appends the tokens as sampled, so what the model sees at inference (the template's re-rendering) differs from what it was trained on; " +
        "history: rerender trains on the re-rendered contexts instead, one sample per model call",
    );
  }
  const cross = plan.rollout.cross_policy;
  if (cross) {
    const { pool: poolCommand, ...main } = opened.trainerCommand;
    const pool = await PoolTrainers.start(
      plan,
      poolCommand ? { ...poolCommand, ...(main.deadlineMs ? { deadlineMs: main.deadlineMs } : {}) } : main,
      arlVersion(),
      vocabulary,
      options.halt,
    );
    trainers.adoptPool(pool);
    log(
      `cross-policy: ${pool.models.length} pool model trainer${pool.models.length === 1 ? "" : "s"} started (${pool.models.map((m) => m.model).join(", ")}), p = ${cross.probability}`,
    );
  }
  const pool = trainers.pool;
  // The generation replica: configured as the trainer was, and on resume given the committed
  // checkpoint, whose behaviour slot is the snapshot the batches in flight started from.
  if (asyncRollout && GenerationReplica.wanted(plan)) {
    const replica = await GenerationReplica.start(
      opened.trainerCommand,
      arlVersion(),
      runDir.dir,
      (client) => configureTrainer(client, plan, vocabulary, true),
      state.checkpoint,
      options.halt,
    );
    trainers.adoptReplica(replica);
    log(
      `generation replica started (pid ${replica.client.pid ?? "?"}): it generates the training batches while the trainer trains`,
    );
  }
  // Inference servers: started or connected, then given the trainer's weights (on resume, the
  // committed checkpoint's), so that they serve exactly policy version `version`.
  const engine = usesEngine(plan) ? await startEngine(options, trainer, policy, trainers) : undefined;
  if (engine) await syncEngine({ engine }, version);
  runDir.writeManifest({
    plan_hash: plan.hash,
    experiment: plan.experiment,
    variant: plan.variant,
    provenance: plan.provenance,
    versions: { arl: arlVersion(), node: process.version, ...trainer.handshakeResult?.versions },
    trainer: trainer.handshakeResult?.trainer,
    capabilities: trainer.handshakeResult?.capabilities,
    model: configured.model,
    ...(pool && cross ? { cross_policy: { probability: cross.probability, pool: pool.models } } : {}),
    seed: plan.seed,
    envs: Object.fromEntries(
      Object.entries(plan.envs).map(([n, e]) => [
        n,
        {
          kind: e.kind,
          version: e.version,
          data:
            "database" in e
              ? { database: e.database, questions: e.questions }
              : e.kind === "agent"
                ? { task_file: e.task_file }
                : e.kind === "dataset"
                  ? { data: e.data, verifier: e.verifier }
                  : e.kind === "swe"
                    ? { requirements: e.requirements }
                    : null,
        },
      ]),
    ),
    checkpoint: state.checkpoint,
    // Run options: how this run was executed, not what it means (outside the plan and its hash).
    run_options: {
      trainer_timeout_s: options.trainerTimeoutS ?? null,
      cold_start_cache: options.coldStartCache ?? null,
      engine_command: options.engineCommand ?? null,
      engine_python: options.enginePython ?? null,
    },
    ...(engine
      ? {
          engine: {
            engine: plan.resources.rollout.engine,
            servers: engine.pool.servers.map((s) => ({
              url: s.url,
              ...launchRecord(engine.launched?.servers[s.index]),
            })),
          },
        }
      : {}),
  });
  // Agent programs call the model through one gateway for the whole run; executePlan closes it.
  const hasAgents = Object.values(plan.envs).some((e) => e.kind === "agent");
  const gateway = hasAgents ? await startGateway({ log }) : undefined;
  if (gateway) log(`agent gateway listening on ${gateway.origin}`);
  // Agent requests are bounded by the model's context; the vocabulary's longest token bounds their text before it is tokenized.
  const modelContext = {
    maxContext: configured.model.max_context ?? null,
    maxTokenBytes: hasAgents ? await maxTokenBytes(policy, configured.tokenizer.vocab_size) : null,
  };
  const ctx: RunContext = {
    plan,
    runDir,
    envs: options.envs,
    log,
    progress: options.progress,
    stop: options.stop,
    trainer,
    configuration: { request: configureParams(plan, vocabulary, behaviourPolicy), result: configured },
    coldStartCache: options.coldStartCache,
    policy: engine ? engine.policy : policy,
    // Training episodes sample from the behaviour snapshot when the rollout is asynchronous (the
    // replica's copy of it, with one); the servers of an engine are synced where that snapshot is
    // taken, so they serve it.
    rolloutPolicy: engine
      ? engine.policy
      : trainers.replica
        ? trainers.replica.policy
        : asyncRollout
          ? new TrainerPolicy(trainer, "behaviour")
          : policy,
    lanes: new EpisodeLanes(plan.rollout.concurrency),
    engine,
    pool,
    validator: new ToolCallValidator(),
    stopIds:
      configured.tokenizer.stop_ids && configured.tokenizer.stop_ids.length > 0
        ? [...configured.tokenizer.stop_ids]
        : [configured.tokenizer.eos_id],
    template,
    buffer: opened.buffer,
    streams: new RunStreams(plan.seed),
    sftData,
    tracking: RunTracking.start({
      plan,
      runDir: runDir.dir,
      resumeAfter: state.iteration,
      dataRoot: options.dataRoot,
      log,
    }),
    gateway,
    modelContext,
    dataRoot: options.dataRoot,
    halt: options.halt,
  };
  return { ctx, version };
}
