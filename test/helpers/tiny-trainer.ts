// What the embedded CPU trainer's tests (test/trainer/embedded-*.test.ts) share: builtin:tiny's
// test vocabulary and small shape, the configure params they start from, and a trainer in-process.
import { type ConfigureParams } from "../../src/contracts/trainer-protocol.js";
import { TinyTrainer } from "../../src/trainer/embedded/trainer.js";
import type { TinyOptions } from "../../src/trainer/embedded/state.js";

export const VOCAB = [
  "You",
  "are",
  "in",
  "the",
  "kitchen",
  "see",
  "a",
  "key",
  "box",
  "take",
  "go",
  "north",
  "south",
  "put",
  "open",
  "Your",
  "task",
  "Exits",
  "is",
  "empty",
];

export const SMALL: TinyOptions = { embed: 16, hidden: 32, heads: 2, keyDim: 8, chunkTokens: 65_536 };

export function configureParams(seed = 0, extra: Partial<ConfigureParams["algorithm"]> = {}): ConfigureParams {
  return {
    seed,
    policy: {
      model: "builtin:tiny",
      chat_template: null,
      sampling: { temperature: 1, top_p: 1, top_k: 0, max_new_tokens: 8 },
    },
    algorithm: {
      optimizer: {
        name: "adamw",
        lr: 3e-3,
        betas: [0.9, 0.999],
        eps: 1e-8,
        weight_decay: 0.01,
        grad_clip: 1,
        warmup_steps: 0,
      },
      critic: null,
      clip: { low: 0.2, high: 0.2, dual: null },
      kl: { coef: 0, estimator: "k3", placement: "loss", reference: { kind: "initial" } },
      ...extra,
    },
    vocabulary: VOCAB,
  };
}

export async function trainer(
  seed = 0,
  extra: Partial<ConfigureParams["algorithm"]> = {},
  options: TinyOptions = SMALL,
): Promise<TinyTrainer> {
  const t = new TinyTrainer(options);
  await t.init();
  t.configure(configureParams(seed, extra));
  return t;
}
