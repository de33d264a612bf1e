// The sync probe (docs/engines.md, "The sync probe"): after a server has loaded a weight version,
// it samples a fixed prompt and the trainer scores the same tokens with the weights it just saved.
// An engine can answer 200 to a weight load and still serve other weights: vLLM's reload keeps a
// tied lm_head as launched (a new body under the old head, max log-prob error 0.48 measured), a
// server may have been pointed at another run's model, or serve another dtype. Only the
// log-probs tell, so every sync is checked, and a server that fails is taken out before it
// samples a single training token.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { ragged, row } from "../../contracts/trainer-protocol.js";
import type { TrainerRequests } from "../../episode/policy.js";
import type { EngineWire } from "./contract.js";
import type { EnginePool, EngineServer } from "./pool.js";

export interface SyncProbeSettings {
  /** Tokens the server samples from the probe prompt; 0: no probe. */
  readonly tokens: number;
  /** Nats: the most the mean |engine - trainer| log-prob may be. */
  readonly tolerance: number;
  /** The probe prompt (the trainer tokenizer's ids of a fixed message). */
  readonly prompt: Int32Array;
  /** The sampling seed of the probe's generation. */
  readonly seed: number;
  /** The model the servers serve, and whether versions are LoRA adapters on it. */
  readonly model: string;
  readonly lora: boolean;
  readonly dtype: string;
}

/** What one probe measured. */
export interface ProbeGap {
  readonly tokens: number;
  readonly meanAbs: number;
  readonly maxAbs: number;
}

/** The text whose chat rendering the probe samples from: fixed, so every sync probes alike. */
export const SYNC_PROBE_TEXT = "Describe the room you are in, then choose your next action.";

/** Mean and largest |engine - trainer| over the generated tokens (engine[k] against trainer[offset + k]). */
function probeGap(engine: Float32Array, trainer: Float32Array, offset: number): ProbeGap {
  let sum = 0;
  let max = 0;
  for (let k = 0; k < engine.length; k++) {
    const gap = Math.abs((engine[k] ?? 0) - (trainer[offset + k] ?? 0));
    sum += gap;
    if (gap > max) max = gap;
  }
  return { tokens: engine.length, meanAbs: engine.length > 0 ? sum / engine.length : 0, maxAbs: max };
}

/**
 * The probe's verdict in words when it failed: the gap, and the causes that fit what the saved
 * folder says of the model (its config.json's tie_word_embeddings), the likeliest first.
 */
export function probeFailure(
  gap: ProbeGap,
  settings: Pick<SyncProbeSettings, "tolerance" | "dtype" | "lora">,
  weightsDir: string,
  version: number,
): string {
  const causes: string[] = [];
  if (!settings.lora && tiesEmbeddings(weightsDir)) {
    causes.push(
      "the model ties its embeddings (tie_word_embeddings in config.json) and vLLM's weight reload keeps a tied lm_head as launched; serve an untied copy of the model (its lm_head.weight written out, tie_word_embeddings: false)",
    );
  }
  causes.push(
    `the server serves another model or another run's weights than the trainer's (launched from another policy.model, or reloaded by someone else)`,
    `the server computes in another dtype than policy.dtype ${settings.dtype} (vLLM's --dtype)`,
    "the server samples from another distribution (a generation_config.json it applies: launch vLLM with --generation-config vllm)",
  );
  return (
    `after loading policy version ${version}, its log-probs of the sync probe's ${gap.tokens} tokens differ from the trainer's by ${gap.meanAbs.toPrecision(3)} nats on average (largest ${gap.maxAbs.toPrecision(3)}), ` +
    `above resources.rollout.sync_probe.tolerance ${settings.tolerance}; likely causes: ${causes.map((c, i) => `(${i + 1}) ${c}`).join("; ")}`
  );
}

/** Whether the model folder's config.json says it ties its embeddings (false without one, or one that cannot be read). */
export function tiesEmbeddings(modelDir: string): boolean {
  const file = path.join(modelDir, "config.json");
  if (!existsSync(file)) return false;
  try {
    const config = JSON.parse(readFileSync(file, "utf8")) as {
      tie_word_embeddings?: unknown;
      text_config?: { tie_word_embeddings?: unknown };
    };
    return config.tie_word_embeddings === true || config.text_config?.tie_word_embeddings === true;
  } catch {
    return false;
  }
}

/** A probe that cannot be made (the server fails the generation, the answer is unreadable): the server is out like one that fails a sync call. */
class SyncProbeError extends Error {}

/**
 * Samples the probe on `server` (synced to `version`) and scores the same tokens on the trainer's
 * current weights (the ones just saved for the servers). The generation bypasses the pool's
 * counts: it is no rollout request.
 */
export async function probeServer(
  wire: EngineWire,
  pool: EnginePool,
  server: EngineServer,
  trainer: TrainerRequests,
  settings: SyncProbeSettings,
  version: number,
  timeoutMs: number,
): Promise<ProbeGap> {
  const args = {
    model: wire.servedModel(settings.model, version, { lora: settings.lora }),
    prompt: settings.prompt,
    maxNewTokens: settings.tokens,
    // The full distribution: what the engine reports is then the raw log-softmax, which the trainer computes alike.
    temperature: 1,
    topP: 1,
    topK: 0,
    stopIds: [],
    seed: settings.seed,
  };
  let generation;
  try {
    generation = wire.parseGeneration(await pool.call(server, wire.generate(args), timeoutMs), args);
  } catch (error) {
    throw new SyncProbeError(`its sync probe's generation failed: ${(error as Error).message}`);
  }
  if (generation.weightVersion !== null && generation.weightVersion !== String(version)) {
    throw new SyncProbeError(
      `it served weight version '${generation.weightVersion}' to the sync probe after loading version ${version}`,
    );
  }
  const ids = new Int32Array(settings.prompt.length + generation.ids.length);
  ids.set(settings.prompt);
  ids.set(generation.ids, settings.prompt.length);
  const mask = new Uint8Array(ids.length).fill(1, settings.prompt.length);
  const scored = await trainer.request("logprobs", {
    ids: ragged([ids], Int32Array),
    policy: "current",
    sampling: { temperature: 1, top_p: 1, top_k: 0 },
    mask: ragged([mask], Uint8Array),
  });
  return probeGap(generation.logprobs, row(scored.logprobs, 0), settings.prompt.length);
}
