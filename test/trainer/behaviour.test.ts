// The behaviour-policy slot of the trainer protocol (asynchronous rollout) in the embedded
// trainer: `snapshot` freezes the weights that generate, later train steps do not touch them,
// `generate`/`logprobs` with policy "behaviour" read them and report their version, checkpoints
// carry them, and the capability is announced through the real process.
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { denominatorsOf } from "../../src/runtime/update/train-batches.js";
import { TrainerClient } from "../../src/trainer/protocol/client.js";
import {
  ragged,
  type ConfigureParams,
  type GenerateParams,
  type TrainStepParams,
} from "../../src/contracts/trainer-protocol.js";
import { TinyTrainer } from "../../src/trainer/embedded/trainer.js";
import { tinyConfigure } from "../helpers/tiny-policy.js";
import { embeddedTrainer, embeddedTrainerMain } from "../helpers/plans.js";

const VOCAB = ["take", "key", "go", "north", "south", "open", "box", "You", "see", "a"];
const SMALL = { embed: 16, hidden: 24, heads: 2, keyDim: 8, chunkTokens: 65_536 };

function configure(seed: number): ConfigureParams {
  return tinyConfigure(seed, VOCAB);
}

async function tiny(seed = 3): Promise<TinyTrainer> {
  const t = new TinyTrainer(SMALL);
  await t.init();
  t.configure(configure(seed));
  return t;
}

const PROMPTS = [Int32Array.from([5, 11, 12, 2, 7]), Int32Array.from([5, 13, 2, 7])];

function generate(policy: "current" | "behaviour"): GenerateParams {
  return {
    prompts: ragged(PROMPTS, Int32Array),
    max_new_tokens: 8,
    temperature: 1,
    top_p: 1,
    top_k: 0,
    stop_ids: [2],
    seeds: Int32Array.from([4, 9]),
    policy,
  };
}

/** A train step that pushes up the tokens after each prompt (all targets, advantage 1). */
function step(t: TinyTrainer): TrainStepParams {
  const ids = [Int32Array.from([...PROMPTS[0]!, 13, 14, 2]), Int32Array.from([...PROMPTS[1]!, 15, 2])];
  const masks = ids.map((s, i) => Uint8Array.from(s, (_, k) => (k >= PROMPTS[i]!.length ? 1 : 0)));
  const logprobs = t.logprobs(ragged(ids, Int32Array), "current", null);
  return {
    ids: ragged(ids, Int32Array),
    loss_mask: ragged(masks, Uint8Array),
    advantages: ragged(
      masks.map((m) => Float32Array.from(m)),
      Float32Array,
    ),
    old_logprobs: logprobs,
    ref_logprobs: null,
    groups: Int32Array.from([0, 0]),
    reduction: { mode: "token_mean" },
    denominators: denominatorsOf(masks, ["g", "g"]),
    microbatches: 1,
    clip: { low: 0.2, high: 0.28, dual: null },
    kl: { coef: 0, estimator: "k3", placement: "loss" },
    sampling: { temperature: 1, top_p: 1, top_k: 0 },
    critic: null,
  };
}

const values = (r: { values: ArrayLike<number> }) => Array.from(r.values);

describe("builtin:tiny behaviour policy", () => {
  it("generates from the snapshot, untouched by later train steps, and reports its version", async () => {
    const t = await tiny();
    expect(() => t.generate(generate("behaviour"))).toThrow(/snapshot/);
    const before = t.generate(generate("current"));
    const scored = t.logprobs(ragged(PROMPTS, Int32Array), "current", null);
    expect(t.snapshot()).toEqual({ policy_version: 0 });
    t.trainStep(step(t));
    t.trainStep(step(t));
    expect(t.version).toBe(2);
    // The current policy moved; the behaviour slot did not.
    expect(values(t.logprobs(ragged(PROMPTS, Int32Array), "current", null))).not.toEqual(values(scored));
    expect(values(t.logprobs(ragged(PROMPTS, Int32Array), "behaviour", null))).toEqual(values(scored));
    const frozen = t.generate(generate("behaviour"));
    expect(frozen.policy_version).toBe(0);
    expect(values(frozen.ids)).toEqual(values(before.ids));
    expect(values(frozen.logprobs)).toEqual(values(before.logprobs));
    expect(t.generate(generate("current")).policy_version).toBe(2);
    // A new snapshot takes the weights of now.
    expect(t.snapshot()).toEqual({ policy_version: 2 });
    expect(values(t.generate(generate("behaviour")).logprobs)).toEqual(
      values(t.generate(generate("current")).logprobs),
    );
  });

  it("keeps the snapshot in checkpoints, and a checkpoint without one empties the slot", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-behaviour-"));
    const a = await tiny();
    a.snapshot();
    a.trainStep(step(a));
    a.save(path.join(dir, "with"));
    const b = await tiny(99);
    b.load(path.join(dir, "with"));
    expect(b.parameters("behaviour")).toEqual(a.parameters("behaviour"));
    expect(b.generate(generate("behaviour"))).toEqual(a.generate(generate("behaviour")));
    const c = await tiny();
    c.save(path.join(dir, "without"));
    b.load(path.join(dir, "without"));
    expect(() => b.generate(generate("behaviour"))).toThrow(/snapshot/);
  });

  it("announces the capability and the method through the real process", async () => {
    expect(existsSync(embeddedTrainerMain), "run `npm run build` first").toBe(true);
    const client = await TrainerClient.start(embeddedTrainer, "test");
    try {
      expect(client.handshakeResult!.capabilities.behaviour_policy).toBe(true);
      expect(client.handshakeResult!.capabilities.methods).toContain("snapshot");
      await client.request("configure", {
        ...configure(1),
        policy: { ...configure(1).policy, model: "builtin:tiny?hidden=16&embed=8" },
        behaviour_policy: true,
      });
      await expect(client.request("generate", generate("behaviour"))).rejects.toThrow(/invalid_request.*snapshot/);
      expect(await client.request("snapshot", {})).toEqual({ policy_version: 0 });
      const g = await client.request("generate", generate("behaviour"));
      expect(g.policy_version).toBe(0);
    } finally {
      await client.shutdown();
    }
  });
});
