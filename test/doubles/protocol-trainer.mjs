#!/usr/bin/env node
// A test double that speaks the trainer protocol (never a backend users can select). Its
// behaviour is chosen by ARL_DOUBLE_MODE: "ok" answers; "crash-on-generate" writes to stderr
// and exits mid-request; "garbage" prints text on stdout instead of frames; "slow-exit" closes
// its stdout after the shutdown reply and exits 2.5 s later (as Python's teardown of torch can).
// Runs from the compiled protocol code: `npm test` builds dist/ first.
import { serve, RequestError } from "../../dist/trainer/protocol/server.js";

const mode = process.env.ARL_DOUBLE_MODE ?? "ok";
process.stderr.write(`double: starting in mode ${mode}\n`);

await serve({
  handshake: () => ({
    protocol: "arl-trainer",
    version: 1,
    trainer: { name: "protocol-double", version: "0" },
    capabilities: {
      methods: ["handshake", "generate", "eval_op", "shutdown"],
      reductions: [],
      kl_estimators: [],
      value_head: false,
      keep_sampling_mask: false,
      world_size: 1,
      device: "cpu",
    },
    versions: { node: process.version },
  }),
  generate: (p) => {
    if (mode === "crash-on-generate") {
      process.stderr.write("double: simulated out-of-memory in generate\nTraceback: line 42\n");
      process.exit(3);
    }
    if (mode === "garbage") {
      process.stdout.write("hello from a print statement\n");
      return {
        ids: p.prompts,
        logprobs: { values: new Float32Array(0), offsets: p.prompts.offsets },
        finish: [],
        policy_version: 0,
      };
    }
    // Echo each prompt reversed, with log-probs -0.5 per token.
    const n = p.prompts.offsets.length - 1;
    const values = new Int32Array(p.prompts.values.length);
    for (let i = 0; i < n; i++) {
      const row = p.prompts.values.subarray(p.prompts.offsets[i], p.prompts.offsets[i + 1]);
      values.set(Int32Array.from(row).reverse(), p.prompts.offsets[i]);
    }
    return {
      ids: { values, offsets: p.prompts.offsets },
      logprobs: { values: new Float32Array(values.length).fill(-0.5), offsets: p.prompts.offsets },
      finish: Array(n).fill("stop"),
      policy_version: 0,
    };
  },
  eval_op: (p) => {
    if (p.op !== "sum") throw new RequestError("unsupported", `op ${p.op}`);
    return { output: p.input.reduce((a, b) => a + b, 0) };
  },
  shutdown: () => ({}),
});
if (mode === "slow-exit") {
  process.stdout.end();
  await new Promise((resolve) => setTimeout(resolve, 2500));
}
