// The weight slots (docs/protocol.md "Behaviour policy", "Reference policy"): the current policy and
// critic that train, the reference policy taken at its first use, and the behaviour snapshot
// that asynchronous rollout samples from; what each request reads, and what a change of the
// current weights invalidates.
import type { PolicySlot } from "../../contracts/trainer-protocol.js";
import type { tf } from "./backend.js";
import { invalid } from "./errors.js";
import { inputTable, type ParamSet, type ReadoutWeights } from "./model.js";
import { PrefixCache } from "./prefix-cache.js";
import type { TrainerState } from "./state.js";

const NO_BEHAVIOUR = "no behaviour policy: send 'snapshot' first (or load a checkpoint that has one)";

/** What one generate request samples from: weights, their derived tables and prefix cache, their version. */
export interface Sampler {
  readonly params: ParamSet;
  readonly table: tf.Tensor2D;
  readonly readout: ReadoutWeights;
  readonly cache: PrefixCache;
  readonly version: number;
}

function readoutOf(params: ParamSet): ReadoutWeights {
  return {
    emb: Float32Array.from(params.get("emb").dataSync() as Float32Array),
    cs: Float32Array.from(params.get("cs").dataSync() as Float32Array),
  };
}

/** The slot a generate request samples from, its derived tables built on first use. */
export function samplerOf(state: TrainerState, slot: PolicySlot): Sampler {
  if (slot === "current") {
    const policy = state.conf.policy;
    state.table ??= inputTable(policy);
    state.readout ??= readoutOf(policy);
    return {
      params: policy,
      table: state.table,
      readout: state.readout,
      cache: state.cache,
      version: state.policyVersion,
    };
  }
  const b = state.behaviour;
  if (!b) throw invalid(NO_BEHAVIOUR);
  b.table ??= inputTable(b.params);
  b.readout ??= readoutOf(b.params);
  return { params: b.params, table: b.table, readout: b.readout, cache: b.cache, version: b.version };
}

/** The weights a logprobs request scores with. */
export function scoringWeights(state: TrainerState, slot: PolicySlot | "reference"): ParamSet {
  if (slot === "reference") return referenceWeights(state);
  if (slot === "behaviour") {
    if (!state.behaviour) throw invalid(NO_BEHAVIOUR);
    return state.behaviour.params;
  }
  return state.conf.policy;
}

/**
 * The reference policy's weights: a copy of the policy taken at the first request that needs
 * it (after the SFT cold start), taken again once `refresh.every` optimizer steps have passed.
 */
function referenceWeights(state: TrainerState): ParamSet {
  const c = state.conf;
  if (!c.reference) throw invalid("no reference policy: algorithm.kl.reference is null");
  const current = state.reference;
  const stale =
    current !== null && c.reference.kind === "refresh" && state.policyVersion - current.version >= c.reference.every;
  if (current && !stale) return current.params;
  current?.params.dispose();
  state.reference = { params: c.policy.clone(), version: state.policyVersion };
  return state.reference.params;
}

/** Copies the current weights into the behaviour slot. */
export function snapshot(state: TrainerState): { policy_version: number } {
  setBehaviour(state, state.conf.policy.clone(), state.policyVersion);
  return { policy_version: state.policyVersion };
}

/** Fills the behaviour slot (null: empties it), with a fresh prefix cache of its own. */
export function setBehaviour(state: TrainerState, params: ParamSet | null, version: number): void {
  state.behaviour?.table?.dispose();
  state.behaviour?.params.dispose();
  state.behaviour = params ? { params, version, table: null, readout: null, cache: new PrefixCache() } : null;
}

/** Fills the reference slot (null: empties it, to be taken again at its next use). */
export function setReference(state: TrainerState, params: ParamSet | null, version: number): void {
  state.reference?.params.dispose();
  state.reference = params ? { params, version } : null;
}

/** Drops everything derived from the current weights (after they change). */
export function currentWeightsChanged(state: TrainerState): void {
  state.table?.dispose();
  state.table = null;
  state.readout = null;
  state.cache.clear();
}

/** Frees every slot before a new configuration replaces them. */
export function releaseAll(state: TrainerState): void {
  currentWeightsChanged(state);
  state.configuration?.policy.dispose();
  state.configuration?.critic?.dispose();
  setReference(state, null, -1);
  setBehaviour(state, null, -1);
  state.configuration = undefined;
}

/** Parameter values of a slot (tests, benchmarks). */
export function slotParameters(
  state: TrainerState,
  which: "policy" | "critic" | "reference" | "behaviour",
): Map<string, Float32Array> {
  const set =
    which === "policy"
      ? state.conf.policy
      : which === "critic"
        ? state.conf.critic
        : which === "behaviour"
          ? (state.behaviour?.params ?? null)
          : (state.reference?.params ?? null);
  if (!set) throw new Error(`no ${which} parameters`);
  return set.read();
}
