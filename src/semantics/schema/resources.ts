import * as z from "zod";
import { doc, enumOf, nonNegativeInt, positiveInt } from "./common.js";

// Where rollouts are sampled (docs/engines.md): the trainer process itself, or vLLM / SGLang
// servers the runtime starts (`launch`) or finds at `urls`, token in, token out.
const rolloutEngineSchema = z.strictObject({
  engine: doc(
    enumOf(["trainer", "vllm", "sglang"]).default("trainer"),
    "`trainer`: the trainer process generates; `vllm` / `sglang`: inference servers do (exact token ids in and out, weights synced after every update).",
  ),
  servers: doc(positiveInt.default(1), "Server replicas; requests go to the one with the fewest outstanding."),
  gpus_per_server: doc(nonNegativeInt.default(1), "GPUs each launched server gets (its tensor-parallel size)."),
  launch: doc(
    z.boolean().default(true),
    "`true`: the runtime starts the servers and stops them at the end; `false`: it uses the servers at `urls`.",
  ),
  urls: doc(
    z.array(z.string().min(1)).default([]),
    "Base URLs of servers the user runs (`http://host:8000`), with `launch: false`.",
  ),
  request_timeout_s: doc(
    z.number().positive().default(600),
    "A generation request answered later than this counts as failed and is retried on another server.",
  ),
  max_retries: doc(
    nonNegativeInt.default(2),
    "Times a failed request is retried on other servers before the episode ends in env_error.",
  ),
  mismatch_threshold: doc(
    z.number().positive().default(0.1),
    "Nats: the metrics count the fraction of generated tokens whose engine and trainer log-probs differ by more than this.",
  ),
  sync_probe: doc(
    z
      .strictObject({
        tokens: doc(
          nonNegativeInt.default(16),
          "Tokens each server generates for the probe after every weight sync (at most policy.sampling.max_new_tokens); 0 turns the probe off.",
        ),
        tolerance: doc(
          z.number().positive().nullable().default(null),
          "Nats: the most the mean |engine - trainer| log-prob over the probe's tokens may be (null: by policy.dtype, 1e-3 float32, 0.05 bfloat16/float16).",
        ),
      })
      .default({ tokens: 16, tolerance: null }),
    "After every weight sync each server samples a fixed prompt and the trainer scores the same tokens: a server whose log-probs differ by more than the tolerance serves other weights than the trainer's, and is taken out.",
  ),
});

export const resourcesSchema = z.strictObject({
  backend: doc(
    enumOf(["local", "torch"]).default("local"),
    "`local`: the embedded CPU trainer; `torch`: the PyTorch trainer in runtime-gpu/.",
  ),
  gpus: doc(nonNegativeInt.default(0), "GPUs in all (torch backend)."),
  nodes: doc(positiveInt.default(1), "Machines; GPUs are split evenly across them."),
  launcher: doc(
    enumOf(["auto", "torchrun", "none"]).default("auto"),
    "`auto`: torchrun when more than one process is needed.",
  ),
  rollout: doc(
    rolloutEngineSchema.default(rolloutEngineSchema.parse({})),
    "Where rollouts are sampled (`rollout { engine: vllm, servers: 2 }`).",
  ),
});
