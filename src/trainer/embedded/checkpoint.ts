// save / load (docs/protocol.md): model.safetensors (policy, critic, reference and behaviour
// weights), optimizer.safetensors (AdamW moments) and trainer.json (versions, step counts,
// vocabulary, shape), written into a temporary directory, fsynced and renamed into place. Both
// empty the prefix cache, so a run resumed from a checkpoint repeats what the uninterrupted run did.
// `policy_only` writes the policy's weights and trainer.json alone (contents "policy"), as an
// inference server loads them on a weight sync; loading that sets the policy and its version only.
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { invalid } from "./errors.js";
import type { ModelShape, ParamSet } from "./model.js";
import { TINY_MODEL } from "../../plan/model-name.js";
import type { AdamW } from "./optimizer.js";
import { encodeSafetensors, readRegularFile, readSafetensors, SafetensorsError, type StTensor } from "./safetensors.js";
import type { TrainerState } from "./state.js";
import { currentWeightsChanged, setBehaviour, setReference } from "./weights.js";
import { defined } from "../../contracts/checked.js";
import { writeFileSynced } from "../../contracts/synced-file.js";

// 2: the read-out's heads have recency slopes (model.ts), so a /1 checkpoint means another function.
const CHECKPOINT_FORMAT = "arl-builtin-tiny/2";
const FILES = ["model.safetensors", "optimizer.safetensors", "trainer.json"];
const POLICY_FILES = ["model.safetensors", "trainer.json"];
/** trainer.json holds versions, counts and the vocabulary: far below this, which bounds what is read. */
const MAX_TRAINER_JSON_BYTES = 256 * 1024 * 1024;

export interface CheckpointResult {
  readonly files: string[];
  readonly policy_version: number;
}

/** trainer.json, as written by `save`. */
interface CheckpointState {
  readonly format?: string;
  /** "policy": the policy's weights alone (save's policy_only); absent or "checkpoint": everything. */
  readonly contents?: string;
  readonly model?: string;
  readonly shape?: ModelShape;
  readonly vocabulary?: string[];
  readonly policy_version?: number;
  readonly optimizer_step?: number;
  readonly critic_optimizer_step?: number | null;
  readonly reference?: { readonly policy_version: number } | null;
  readonly behaviour?: { readonly policy_version: number } | null;
}

/** Puts the directory `tmp` at `target`, replacing what is there, never leaving `target` half written. */
function renameIntoPlace(tmp: string, target: string): void {
  if (existsSync(target)) {
    const old = `${target}.old-${process.pid}`;
    rmSync(old, { recursive: true, force: true });
    renameSync(target, old);
    renameSync(tmp, target);
    rmSync(old, { recursive: true, force: true });
  } else renameSync(tmp, target);
}

function weightTensors(state: TrainerState, policyOnly: boolean): Map<string, StTensor> {
  const c = state.conf;
  const model = new Map<string, StTensor>();
  const put = (prefix: string, set: ParamSet | null) => {
    if (!set) return;
    const values = set.read();
    for (const s of set.specs)
      model.set(`${prefix}.${s.name}`, {
        dtype: "F32",
        shape: s.shape,
        data: defined(values.get(s.name), `parameter ${prefix}.${s.name}`),
      });
  };
  put("policy", c.policy);
  if (policyOnly) return model;
  put("critic", c.critic);
  put("reference", state.reference?.params ?? null);
  put("behaviour", state.behaviour?.params ?? null);
  return model;
}

function optimizerTensors(state: TrainerState): Map<string, StTensor> {
  const c = state.conf;
  const optimizer = new Map<string, StTensor>();
  const put = (prefix: string, opt: AdamW | null, set: ParamSet | null) => {
    if (!opt || !set) return;
    for (const s of set.specs) {
      const slot = opt.slots.get(s.name);
      if (!slot) continue;
      optimizer.set(`${prefix}.${s.name}.m`, { dtype: "F32", shape: s.shape, data: slot.m });
      optimizer.set(`${prefix}.${s.name}.v`, { dtype: "F32", shape: s.shape, data: slot.v });
    }
  };
  put("policy", c.policyOpt, c.policy);
  put("critic", c.criticOpt, c.critic);
  return optimizer;
}

export function save(state: TrainerState, dir: string, policyOnly = false): CheckpointResult {
  const c = state.conf;
  const target = path.resolve(dir);
  mkdirSync(path.dirname(target), { recursive: true });
  const tmp = `${target}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp);
  const model = weightTensors(state, policyOnly);
  const meta = {
    format: CHECKPOINT_FORMAT,
    contents: policyOnly ? "policy" : "checkpoint",
    model: TINY_MODEL,
    shape: c.shape,
    seed: c.seed,
    vocabulary: c.tokenizer.words,
    policy_version: state.policyVersion,
    optimizer_step: c.policyOpt.step,
    critic_optimizer_step: c.criticOpt?.step ?? null,
    reference: state.reference ? { policy_version: state.reference.version } : null,
    behaviour: state.behaviour ? { policy_version: state.behaviour.version } : null,
    // Sampling draws from per-request seeds and there is no dropout: no other random state.
    rng: { init: [c.seed, 1], sampling: "per-request seed, stream 7" },
  };
  writeFileSynced(path.join(tmp, "model.safetensors"), encodeSafetensors(model, { format: CHECKPOINT_FORMAT }));
  if (!policyOnly)
    writeFileSynced(
      path.join(tmp, "optimizer.safetensors"),
      encodeSafetensors(optimizerTensors(state), { format: CHECKPOINT_FORMAT }),
    );
  writeFileSynced(path.join(tmp, "trainer.json"), `${JSON.stringify(meta, null, 2)}\n`);
  renameIntoPlace(tmp, target);
  // The next iteration starts from an empty prefix cache, as a resumed run does.
  state.cache.clear();
  return { files: [...(policyOnly ? POLICY_FILES : FILES)], policy_version: state.policyVersion };
}

/** trainer.json of a checkpoint of this configuration, or an invalid_request saying why not. */
function readCheckpointState(state: TrainerState, target: string): CheckpointState {
  const c = state.conf;
  let meta: CheckpointState;
  try {
    meta = JSON.parse(
      readRegularFile(path.join(target, "trainer.json"), MAX_TRAINER_JSON_BYTES).toString("utf8"),
    ) as CheckpointState;
  } catch (error) {
    throw invalid(`cannot read a checkpoint at ${target}: ${(error as Error).message}`);
  }
  if (meta.format !== CHECKPOINT_FORMAT || meta.model !== TINY_MODEL)
    throw invalid(`${target} is not a ${TINY_MODEL} checkpoint (format ${String(meta.format)})`);
  const words = c.tokenizer.words;
  if (!meta.vocabulary || meta.vocabulary.length !== words.length || meta.vocabulary.some((w, i) => w !== words[i]))
    throw invalid(`${target}: the checkpoint's vocabulary differs from the configured one`);
  const shape = meta.shape;
  if (!shape || (Object.keys(c.shape) as (keyof ModelShape)[]).some((k) => shape[k] !== c.shape[k]))
    throw invalid(
      `${target}: the checkpoint's model shape ${JSON.stringify(shape)} differs from the configured ${JSON.stringify(c.shape)}`,
    );
  return meta;
}

function restoreOptimizer(
  optimizer: Map<string, StTensor>,
  prefix: string,
  opt: AdamW | null,
  set: ParamSet | null,
  step: number | null | undefined,
): void {
  if (!opt || !set) return;
  opt.slots.clear();
  opt.step = step ?? 0;
  for (const s of set.specs) {
    const m = optimizer.get(`${prefix}.${s.name}.m`);
    const v = optimizer.get(`${prefix}.${s.name}.v`);
    const size = s.shape.reduce((a, b) => a * b, 1);
    if (m && v) {
      if (m.data.length !== size || v.data.length !== size)
        throw invalid(
          `optimizer.safetensors: ${prefix}.${s.name}'s moments have ${m.data.length} and ${v.data.length} values, not the parameter's ${size}`,
        );
      opt.slots.set(s.name, { m: Float32Array.from(m.data), v: Float32Array.from(v.data) });
    }
  }
}

/** A checkpoint's safetensors file, its faults (not a regular file, not safetensors, sizes that lie) answered as invalid_request naming it. */
function checkpointTensors(file: string): Map<string, StTensor> {
  try {
    return readSafetensors(file).tensors;
  } catch (error) {
    if (error instanceof SafetensorsError) throw invalid(`cannot load the checkpoint: ${error.message}`);
    throw error;
  }
}

export function load(state: TrainerState, dir: string): CheckpointResult {
  const c = state.conf;
  const target = path.resolve(dir);
  const meta = readCheckpointState(state, target);
  const model = checkpointTensors(path.join(target, "model.safetensors"));
  // Read whole before anything is written: a damaged file leaves the loaded weights as they were.
  const optimizer = meta.contents === "policy" ? null : checkpointTensors(path.join(target, "optimizer.safetensors"));
  const take = (prefix: string, set: ParamSet) => {
    const values = new Map<string, Float32Array>();
    for (const s of set.specs) {
      const t = model.get(`${prefix}.${s.name}`);
      if (!t || !(t.data instanceof Float32Array))
        throw invalid(`${target}: model.safetensors lacks ${prefix}.${s.name}`);
      const size = s.shape.reduce((a, b) => a * b, 1);
      if (t.data.length !== size)
        throw invalid(
          `${target}: model.safetensors holds ${t.data.length} values for ${prefix}.${s.name}, whose shape [${s.shape.join(", ")}] has ${size}`,
        );
      values.set(s.name, t.data);
    }
    return values;
  };
  /** A copy of the policy's structure holding the checkpoint's `prefix` weights. */
  const frozen = (prefix: string) => {
    const params = c.policy.clone();
    params.write(take(prefix, params));
    return params;
  };
  c.policy.write(take("policy", c.policy));
  if (optimizer === null) {
    // A weight sync's folder: the policy's weights and version; optimizer, critic, reference and
    // behaviour stay as they are.
    state.policyVersion = meta.policy_version ?? 0;
    currentWeightsChanged(state);
    return { files: [...POLICY_FILES], policy_version: state.policyVersion };
  }
  if (c.critic) c.critic.write(take("critic", c.critic));
  setReference(state, null, -1);
  if (meta.reference) setReference(state, frozen("reference"), meta.reference.policy_version);
  setBehaviour(state, null, -1);
  if (meta.behaviour) setBehaviour(state, frozen("behaviour"), meta.behaviour.policy_version);
  restoreOptimizer(optimizer, "policy", c.policyOpt, c.policy, meta.optimizer_step);
  restoreOptimizer(optimizer, "critic", c.criticOpt, c.critic, meta.critic_optimizer_step);
  state.policyVersion = meta.policy_version ?? 0;
  currentWeightsChanged(state);
  return { files: [...FILES], policy_version: state.policyVersion };
}
