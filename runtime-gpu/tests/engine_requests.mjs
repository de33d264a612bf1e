// The HTTP calls ARL's engine wires build (dist/inference/engine/wires.js, `npm run build` first),
// printed for test_engine_requests.py to parse with vLLM's and SGLang's own request classes.
//
//   node engine_requests.mjs requests   one JSON object: per engine, the generate calls for a
//                                        spread of sampling settings, the weight-sync calls,
//                                        health and the launch commands
//   node engine_requests.mjs parse      reads [{engine, answer, request}] on stdin (answers the
//                                        engines' response classes wrote) and prints, per item,
//                                        the generation the wire read or the error it raised
import { readFileSync } from "node:fs";
import { engineWire } from "../../dist/inference/engine/wires.js";

const PROMPT = [151644, 872, 198, 9707, 151645, 198, 151644, 77091, 198];
const STOP_IDS = [151645, 151643];

/** The sampling settings ARL plans produce, each as the generation arguments of one request. */
const SAMPLINGS = {
  greedy: { temperature: 0, topP: 1, topK: 0 },
  temperature: { temperature: 0.7, topP: 1, topK: 0 },
  top_p: { temperature: 1, topP: 0.9, topK: 0 },
  top_k: { temperature: 1, topP: 1, topK: 40 },
  top_k_top_p: { temperature: 0.6, topP: 0.95, topK: 20 },
  top_k_above_mask_cap: { temperature: 1, topP: 1, topK: 5000 },
  no_stop_ids: { temperature: 1, topP: 1, topK: 0, stopIds: [] },
  large_seed: { temperature: 1, topP: 1, topK: 0, seed: 4294967295 },
  lora: { temperature: 1, topP: 1, topK: 0, lora: true },
};

function generateArgs(wire, name, sampling) {
  const model = wire.servedModel("Qwen/Qwen2.5-0.5B-Instruct", sampling.lora ? 3 : 0, { lora: sampling.lora === true });
  return {
    model,
    prompt: Int32Array.from(PROMPT),
    maxNewTokens: 64,
    temperature: sampling.temperature,
    topP: sampling.topP,
    topK: sampling.topK,
    stopIds: sampling.stopIds ?? STOP_IDS,
    seed: sampling.seed ?? 1234 + name.length,
  };
}

function jsonArgs(args) {
  return { ...args, prompt: Array.from(args.prompt) };
}

function requests() {
  const out = {};
  for (const engine of ["vllm", "sglang"]) {
    const wire = engineWire(engine);
    const launch = { model: "Qwen/Qwen2.5-0.5B-Instruct", host: "127.0.0.1", port: 8100, seed: 7, dtype: "bfloat16", gpus: 2, maxModelLen: 8192, python: null };
    out[engine] = {
      generate: Object.entries(SAMPLINGS).map(([name, sampling]) => {
        const args = generateArgs(wire, name, sampling);
        return { name, args: jsonArgs(args), call: wire.generate(args) };
      }),
      weightSync: { full: wire.weightSync("/runs/r1/weights/v3", 3, { lora: false }), lora: wire.weightSync("/runs/r1/weights/v3", 3, { lora: true }) },
      unloadAdapter: wire.unloadAdapter(3),
      health: wire.health(),
      launch: {
        full: wire.launchCommand({ ...launch, loraRank: null }),
        lora: wire.launchCommand({ ...launch, maxModelLen: null, loraRank: 16 }),
        module: wire.launchCommand({ ...launch, loraRank: null, python: "/opt/engine/bin/python" }),
      },
    };
  }
  return out;
}

function parse(items) {
  return items.map(({ engine, answer, request }) => {
    const args = request === null ? undefined : { ...request, prompt: Int32Array.from(request.prompt) };
    try {
      const generation = engineWire(engine).parseGeneration(answer, args);
      return { ids: Array.from(generation.ids), logprobs: Array.from(generation.logprobs), finish: generation.finish, weightVersion: generation.weightVersion };
    } catch (error) {
      return { error: error.name, message: error.message };
    }
  });
}

const mode = process.argv[2];
if (mode === "requests") process.stdout.write(JSON.stringify(requests()));
else if (mode === "parse") process.stdout.write(JSON.stringify(parse(JSON.parse(readFileSync(0, "utf8")))));
else {
  process.stderr.write("usage: node engine_requests.mjs requests|parse\n");
  process.exitCode = 2;
}
