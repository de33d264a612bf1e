// A trainer that accepts train_step batches and does nothing with them: the protocol benchmark
// measures the framing and the pipe, not a model. Bench infrastructure, not a backend.
import { serve } from "../trainer/protocol/server.js";

await serve({
  handshake: () => ({
    protocol: "arl-trainer",
    version: 1,
    trainer: { name: "bench-sink", version: "0" },
    capabilities: {
      methods: ["train_step", "shutdown"],
      reductions: [],
      kl_estimators: [],
      value_head: false,
      keep_sampling_mask: false,
      world_size: 1,
      device: "cpu",
    },
    versions: { node: process.version },
  }),
  train_step: (p) => ({
    loss: 0,
    policy_loss: 0,
    kl: 0,
    entropy: 0,
    clip_fraction: 0,
    ratio_mean: 1,
    ratio_min: 1,
    ratio_max: 1,
    grad_norm: 0,
    tokens: p.ids.values.length,
    policy_version: 0,
  }),
  shutdown: () => ({}),
});
