// Trainer protocol throughput: a train_step batch of 256 sequences x 4,096 tokens through the
// real client, framing and a child process, against the same bytes written raw through a pipe
// to a child that only counts them (the ceiling of any protocol over this pipe). Also the
// harness's own cost per turn with an instant policy and an in-process env.
import { execa } from "execa";
import { fileURLToPath } from "node:url";
import { encodeFrame } from "../trainer/protocol/framing.js";
import { TrainerClient } from "../trainer/protocol/client.js";
import { ragged, type TrainStepParams } from "../contracts/trainer-protocol.js";
import type { EnvInstance } from "../contracts/env.js";
import type { Plan } from "../plan/schema.js";
import { runEpisode } from "../episode/harness.js";
import type { Policy } from "../episode/policy.js";
import { ToolCallValidator } from "../contracts/tool-calls.js";
import { measure, median, paired, type BenchResult, type BenchSection, type MeasureOptions } from "./harness.js";
import { defined } from "../contracts/checked.js";

const SEQUENCES = 256;
const TOKENS = 4096;

function batch(): TrainStepParams {
  const seqs = Array.from({ length: SEQUENCES }, (_, i) =>
    Int32Array.from({ length: TOKENS }, (_, k) => (i * 31 + k) % 32000),
  );
  const ones = Array.from({ length: SEQUENCES }, () => new Uint8Array(TOKENS).fill(1));
  const floats = Array.from({ length: SEQUENCES }, () => new Float32Array(TOKENS).fill(-0.5));
  return {
    ids: ragged(seqs, Int32Array),
    loss_mask: ragged(ones, Uint8Array),
    advantages: ragged(floats, Float32Array),
    old_logprobs: ragged(floats, Float32Array),
    ref_logprobs: null,
    groups: Int32Array.from({ length: SEQUENCES }, (_, i) => i >> 3),
    reduction: { mode: "token_mean" },
    denominators: {
      tokens: SEQUENCES * TOKENS,
      sequences: SEQUENCES,
      groups: SEQUENCES / 8,
      group_tokens: new Float64Array(SEQUENCES / 8).fill(8 * TOKENS),
      sequence_tokens: new Float64Array(SEQUENCES).fill(TOKENS),
    },
    microbatches: 1,
    clip: { low: 0.2, high: 0.2, dual: null },
    kl: { coef: 0, estimator: "k3", placement: "loss" },
    sampling: null,
    critic: null,
  };
}

/** A child that reads `bytes` bytes per round and answers one byte. */
const RAW_SINK = `
let need = Number(process.argv[1]); let got = 0;
process.stdin.on("data", (c) => { got += c.length; while (got >= need) { got -= need; process.stdout.write("k"); } });
`;

function harnessPlan(): Plan {
  const tool = {
    name: "step",
    env: "e",
    timeout_s: 30,
    definition: {
      type: "function",
      function: {
        name: "step",
        description: "step",
        parameters: {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          properties: {},
          required: [],
          additionalProperties: false,
        },
      },
    },
  };
  return {
    policy: {
      model: "bench",
      chat_template: null,
      sampling: { temperature: 1, top_p: 1, top_k: 0, max_new_tokens: 64 },
    },
    harness: {
      format: "function_call",
      system_prompt: null,
      max_turns: 100,
      max_response_tokens: 64,
      max_total_tokens: null,
      on_budget: "truncate",
      observation: { max_tokens: 64, overflow: "keep_head" },
      tool_timeout_s: 30,
      context: { history: "exact" },
    },
    constraints: {},
    tools: [tool],
  } as unknown as Plan;
}

export function protocolSection(options: MeasureOptions): BenchSection {
  return {
    name: "trainer protocol and harness",
    describe: () => [
      `train_step batch: ${SEQUENCES} sequences x ${TOKENS} tokens (ids int32, mask uint8, advantages and old log-probs float32), one request and its answer per run.`,
      "raw pipe = the same frame bytes written to a child that only counts them (one byte back per batch).",
    ],
    async run() {
      const params = batch();
      const frameBytes = encodeFrame({ id: 1, method: "train_step", params }).length;
      const sink = fileURLToPath(new URL("./sink-trainer.js", import.meta.url));
      const client = await TrainerClient.start({ file: process.execPath, args: [sink] }, "bench");
      const payload = encodeFrame({ id: 1, method: "train_step", params });
      const raw = execa(process.execPath, ["-e", RAW_SINK, String(payload.length)], {
        stdin: "pipe",
        stdout: "pipe",
        buffer: false,
      });
      const rawRound = () =>
        new Promise<void>((resolve) => {
          raw.stdout.once("data", () => resolve());
          raw.stdin.write(payload);
        });
      // Interleaved (pipe, protocol, pipe, ...): the ratio of each pair, then their median.
      const pair = await paired(
        { name: "raw pipe: same bytes", fn: rawRound, work: { bytes: frameBytes } },
        {
          name: "protocol: train_step round trip",
          fn: () => client.request("train_step", params),
          work: { bytes: frameBytes },
        },
        {
          name: "throughput ratio protocol / raw pipe",
          goal: ">= 0.5",
          note: "median of the per-pair ratios pipe ms / protocol ms (interleaved), spread in its column",
        },
        { ...options, runs: Math.max(options.runs, 9) },
      );
      await client.shutdown();
      raw.stdin.end();
      await raw.catch(() => undefined);
      const ratio = defined(pair.ratio.value, "the paired ratio");

      // Harness overhead: an instant policy and env, 100 turns per episode.
      const plan = harnessPlan();
      const call = Int32Array.from('{"name":"step","arguments":{}}', (c) => c.charCodeAt(0));
      const policy: Policy = {
        encode: async (messages) =>
          messages.map((m) => Int32Array.from(m.content.slice(0, 32), (c) => c.charCodeAt(0))),
        decode: async (ids) => String.fromCharCode(...ids),
        generate: async () => ({
          ids: call,
          logprobs: new Float32Array(call.length),
          finish: "stop",
          policyVersion: 0,
        }),
      };
      const env = (): EnvInstance => ({
        reset: async () => ({ text: "go", signals: {} }),
        step: async () => ({ text: "ok", signals: {}, terminated: false }),
        outcome: async () => ({}),
        close: async () => undefined,
      });
      const validator = new ToolCallValidator();
      const turns = 100;
      const episodes = await measure(
        () =>
          runEpisode({
            plan,
            envName: "e",
            env: env(),
            policy,
            tools: plan.tools,
            validator,
            stopIds: [],
            seed: () => 0,
          }),
        options,
      );
      const perTurnUs = (median(episodes) * 1000) / turns;

      const rows: BenchResult[] = [
        pair.b,
        pair.a,
        { ...pair.ratio, met: ratio >= 0.5 },
        {
          name: "harness overhead per turn",
          value: perTurnUs,
          unit: "us",
          note: "instant policy and env, 100 turns, prefix check and JSON call parsing included",
        },
      ];
      return rows;
    },
  };
}
