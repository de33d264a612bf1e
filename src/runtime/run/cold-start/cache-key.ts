// The key of a cached cold start (cache.ts): the sha256 of everything that decides its weights,
// its optimizer state and its losses. The trainer as it announced itself (name, version,
// protocol, capabilities and versions: the embedded trainer's `code` digest names its build),
// its configure request and answer (seed, model and shape, dtype, vocabulary, optimizer and
// critic settings), the cold start's knobs, the settings every step is sent with, each epoch's
// order, and the bytes of every sequence (ids, roles, loss mask, group; the held-out records'
// too, whose losses are recorded). The configured peak rate is left out when rollout.sft.lr
// replaces it in every step (docs/protocol.md, train_step `lr`): RL's rate does not touch the
// cold start, so variants that differ in it share one. Caching never changes a result, so
// whether it is on is no part of the plan.
import { createHash } from "node:crypto";
import { defined } from "../../../contracts/checked.js";
import type { ConfigureParams, HandshakeResult } from "../../../contracts/trainer-protocol.js";
import { canonicalize } from "../../../plan/canonical.js";
import { arlVersion } from "../../../plan/version.js";
import type { Plan } from "../../../plan/schema.js";
import { lossMask, trainStepParams, type TrainSequence } from "../../update/train-batches.js";
import type { ColdStartData } from "./sft.js";
import type { TrainerConfiguration } from "../context.js";

/** The cold start's procedure (sft.ts, phase.ts): raised when what the same inputs train changes. */
const COLD_START_RECIPE = "arl-cold-start/1";

/** Why the cold start of a run with this trainer is not cached; undefined when it can be. */
export function uncacheable(handshake: HandshakeResult | undefined): string | undefined {
  if (handshake?.capabilities.deterministic === true) return undefined;
  return `trainer '${handshake?.trainer.name ?? "?"}' does not announce deterministic training (capabilities.deterministic), so a cached cold start might differ from one trained afresh`;
}

/** The configure request without the optimizer's peak rate when every cold-start step sends its own. */
function configureInputs(request: ConfigureParams, sft: NonNullable<Plan["rollout"]["sft"]>): ConfigureParams {
  if (sft.lr === null) return request;
  const optimizer = request.algorithm.optimizer;
  if (typeof optimizer !== "object" || optimizer === null) return request;
  const { lr: _replaced, ...kept } = optimizer as Record<string, unknown>;
  return { ...request, algorithm: { ...request.algorithm, optimizer: kept } };
}

/** What every cold-start step sends besides its sequences (reduction, microbatches, clip, KL, sampling, critic). */
function stepSettings(sftPlan: Plan): Record<string, unknown> {
  const {
    ids: _ids,
    loss_mask: _mask,
    advantages: _advantages,
    old_logprobs: _old,
    ref_logprobs: _ref,
    groups: _groups,
    denominators: _denominators,
    ...settings
  } = trainStepParams(sftPlan, []);
  return settings;
}

/** Length-prefixed bytes of one sequence: its group, ids, roles and loss mask. */
function hashSequence(hash: ReturnType<typeof createHash>, s: TrainSequence): void {
  const group = Buffer.from(s.group, "utf8");
  const mask = lossMask(s.roles, "generated");
  const lengths = Int32Array.of(group.length, s.ids.length, s.roles.length, mask.length);
  hash.update(new Uint8Array(lengths.buffer));
  hash.update(group);
  hash.update(new Uint8Array(s.ids.buffer, s.ids.byteOffset, s.ids.byteLength));
  hash.update(s.roles);
  hash.update(mask);
}

/** The cache key (sha256 hex) of the cold start `data` trained by the trainer that answered `handshake` and `configuration`. */
export function coldStartKey(
  plan: Plan,
  handshake: HandshakeResult,
  configuration: TrainerConfiguration,
  data: ColdStartData,
): string {
  const sft = defined(plan.rollout.sft, "rollout.sft of a plan with a cold start");
  const inputs = {
    recipe: COLD_START_RECIPE,
    arl: arlVersion(),
    trainer: {
      protocol: handshake.protocol,
      version: handshake.version,
      trainer: handshake.trainer,
      capabilities: handshake.capabilities,
      versions: handshake.versions,
    },
    configure: configureInputs(configuration.request, sft),
    configured: configuration.result,
    sft,
    steps: {
      settings: stepSettings(data.sftPlan),
      lr: sft.lr,
      per_step: data.perStep,
      steps_per_epoch: data.stepsPerEpoch,
      orders: data.orders,
    },
    counts: {
      demos: data.demos,
      sequences: data.sequences.length,
      records: data.records.train.length,
      heldout: data.records.heldout.length,
      truncated: data.records.truncated,
      skipped: data.records.skipped,
    },
  };
  const hash = createHash("sha256");
  hash.update(canonicalize(inputs));
  for (const s of data.sequences) hashSequence(hash, s);
  for (const s of data.records.heldout) hashSequence(hash, s);
  return hash.digest("hex");
}
