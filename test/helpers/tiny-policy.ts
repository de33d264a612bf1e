// A policy over a small embedded trainer run in-process (no trainer process): what the gateway's
// and the agent runner's tests generate with.
import type { ConfigureParams, Method, Methods } from "../../src/contracts/trainer-protocol.js";
import type { Plan } from "../../src/plan/schema.js";
import { TrainerPolicy, type TrainerRequests } from "../../src/episode/policy.js";
import { TinyTrainer } from "../../src/trainer/embedded/trainer.js";

const SMALL = { embed: 16, hidden: 24, heads: 2, keyDim: 8, chunkTokens: 65_536 };

/** A configure request for builtin:tiny over `vocabulary`: plain sampling, AdamW at 5e-2, no critic, no KL. */
export function tinyConfigure(seed: number, vocabulary: readonly string[]): ConfigureParams {
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
        lr: 5e-2,
        betas: [0.9, 0.999],
        eps: 1e-8,
        weight_decay: 0,
        grad_clip: null,
        warmup_steps: 0,
      },
      critic: null,
      clip: { low: 0.2, high: 0.28, dual: null },
      kl: { coef: 0, estimator: "k3", placement: "loss", reference: null },
    },
    vocabulary: [...vocabulary],
  };
}

/** The embedded trainer configured for `plan`'s sampling over `vocabulary` (seed 3), and a TrainerPolicy over it. */
export async function tinyPolicy(
  plan: Plan,
  vocabulary: readonly string[],
): Promise<{ tiny: TinyTrainer; policy: TrainerPolicy }> {
  const tiny = new TinyTrainer(SMALL);
  await tiny.init();
  tiny.configure({
    seed: 3,
    policy: { model: "builtin:tiny", chat_template: null, sampling: plan.policy.sampling },
    algorithm: {
      optimizer: {
        name: "adamw",
        lr: 1e-3,
        betas: [0.9, 0.999],
        eps: 1e-8,
        weight_decay: 0,
        grad_clip: null,
        warmup_steps: 0,
      },
      critic: null,
      clip: { low: 0.2, high: 0.28, dual: null },
      kl: { coef: 0, estimator: "k3", placement: "loss", reference: null },
    },
    vocabulary: [...vocabulary],
  });
  const requests: TrainerRequests = {
    request: async <M extends Method>(method: M, params: Methods[M][0]) => tiny.request(method, params),
  };
  return { tiny, policy: new TrainerPolicy(requests) };
}
