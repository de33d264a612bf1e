// The engines' wire formats: the bodies ARL sends and how answers are read. The bodies are
// validated against vLLM's and SGLang's own request classes in
// runtime-gpu/tests/test_engine_requests.py; here, what ARL itself relies on.
import { describe, expect, it } from "vitest";
import { EngineProtocolError, type EngineGenerateArgs } from "../../../src/inference/engine/contract.js";
import { adapterName, adapterVersion } from "../../../src/inference/engine/lora-adapters.js";
import { sglangWire } from "../../../src/inference/engine/sglang-wire.js";
import { vllmMaxLoraRank, vllmWire } from "../../../src/inference/engine/vllm-wire.js";
import { engineWire } from "../../../src/inference/engine/wires.js";

const request: EngineGenerateArgs = {
  model: "Qwen/Qwen2.5-0.5B-Instruct",
  prompt: Int32Array.from([151644, 872, 198]),
  maxNewTokens: 4,
  temperature: 1,
  topP: 1,
  topK: 0,
  stopIds: [151645, 151643],
  seed: 7,
};

function bodyOf(call: { readonly body?: unknown }): Record<string, unknown> {
  return call.body as Record<string, unknown>;
}

function vllmAnswer(choice: Record<string, unknown>): unknown {
  return {
    id: "cmpl-1",
    object: "text_completion",
    model: request.model,
    choices: [
      {
        index: 0,
        text: "hi",
        finish_reason: "stop",
        token_ids: [9707, 151645],
        logprobs: { token_logprobs: [-0.5, -0.25] },
        ...choice,
      },
    ],
  };
}

function sglangAnswer(meta: Record<string, unknown>, outputIds: readonly number[] = [9707, 151645]): unknown {
  return {
    text: "hi",
    output_ids: outputIds,
    meta_info: {
      id: "r1",
      finish_reason: { type: "stop", matched: 151645 },
      output_token_logprobs: outputIds.map((id, k) => [-0.5 / (k + 1), id, null]),
      weight_version: "default",
      ...meta,
    },
  };
}

function protocolError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(EngineProtocolError);
    return (error as Error).message;
  }
  throw new Error("expected an EngineProtocolError");
}

describe("vLLM wire", () => {
  it("sends the exact prompt ids and the plan's sampling, with the stop ids as the whole stop set", () => {
    const call = vllmWire.generate({ ...request, topK: 20, topP: 0.9 });
    expect(call).toMatchObject({ method: "POST", path: "/v1/completions" });
    expect(bodyOf(call)).toMatchObject({
      model: request.model,
      prompt: [151644, 872, 198],
      max_tokens: 4,
      top_k: 20,
      top_p: 0.9,
      seed: 7,
      stop_token_ids: [151645, 151643],
      ignore_eos: true,
      logprobs: 0,
      return_token_ids: true,
      repetition_penalty: 1,
    });
  });

  it("reads ids, log-probs, finish and the synced weight version", () => {
    const generation = vllmWire.parseGeneration(
      vllmAnswer({ weight_versions: [{ version: "3", start: 0, end: 2 }] }),
      request,
    );
    expect(Array.from(generation.ids)).toEqual([9707, 151645]);
    expect(Array.from(generation.logprobs)).toEqual([-0.5, -0.25]);
    expect(generation.finish).toBe("stop");
    expect(generation.weightVersion).toBe("3");
    expect(
      vllmWire.parseGeneration(vllmAnswer({ weight_versions: [{ version: "default", start: 0, end: 2 }] }))
        .weightVersion,
    ).toBeNull();
  });

  it("gives greedy generations log-prob 0 and LoRA generations their adapter's version", () => {
    const greedy = vllmWire.parseGeneration(vllmAnswer({}), { ...request, temperature: 0 });
    expect(Array.from(greedy.logprobs)).toEqual([0, 0]);
    const lora = vllmWire.parseGeneration(vllmAnswer({ weight_versions: [{ version: "default", start: 0, end: 2 }] }), {
      ...request,
      model: adapterName(5),
    });
    expect(lora.weightVersion).toBe("5");
  });

  it("names the field and what was there when an answer cannot be read", () => {
    expect(protocolError(() => vllmWire.parseGeneration("<html>502 Bad Gateway</html>"))).toMatch(
      /the answer = "<html>502 Bad Gateway<\/html>"; expected an object/,
    );
    expect(protocolError(() => vllmWire.parseGeneration(vllmAnswer({ token_ids: undefined })))).toMatch(
      /choices\[0\]\.token_ids = nothing; expected a list/,
    );
    expect(
      protocolError(() => vllmWire.parseGeneration(vllmAnswer({ logprobs: { token_logprobs: [-0.5, null] } }))),
    ).toMatch(/token_logprobs\[1\] = null/);
    expect(protocolError(() => vllmWire.parseGeneration(vllmAnswer({ finish_reason: "abort" })))).toMatch(
      /finish_reason = "abort"/,
    );
    expect(protocolError(() => vllmWire.parseGeneration(vllmAnswer({ token_ids: [1, -2] })))).toMatch(
      /token_ids\[1\] = -2; expected a token id/,
    );
  });

  it("refuses answers that break the request: too long, a stop without a stop id, two weight versions", () => {
    expect(protocolError(() => vllmWire.parseGeneration(vllmAnswer({}), { ...request, maxNewTokens: 1 }))).toMatch(
      /at most max_new_tokens = 1/,
    );
    expect(protocolError(() => vllmWire.parseGeneration(vllmAnswer({ token_ids: [9707, 11] }), request))).toMatch(
      /end with one of the stop ids/,
    );
    const mixed = [
      { version: "1", start: 0, end: 1 },
      { version: "2", start: 1, end: 2 },
    ];
    expect(protocolError(() => vllmWire.parseGeneration(vllmAnswer({ weight_versions: mixed })))).toMatch(
      /one weight version/,
    );
  });

  it("syncs full weights by pause, reload, relabel, resume, and adapters by loading them under their version's name", () => {
    expect(vllmWire.weightSync("/run/weights/v2", 2, { lora: false })).toEqual([
      { method: "POST", path: "/pause?mode=wait" },
      {
        method: "POST",
        path: "/collective_rpc",
        body: { method: "reload_weights", kwargs: { weights_path: "/run/weights/v2" } },
      },
      { method: "POST", path: "/update_weight_version", body: { new_version: "2" } },
      { method: "POST", path: "/resume" },
    ]);
    expect(vllmWire.weightSync("/run/weights/v2", 2, { lora: true })).toEqual([
      {
        method: "POST",
        path: "/v1/load_lora_adapter",
        body: { lora_name: "arl-policy-v2", lora_path: "/run/weights/v2", load_inplace: true },
        answer: "text",
      },
    ]);
    expect(vllmWire.unloadAdapter(2)).toEqual({
      method: "POST",
      path: "/v1/unload_lora_adapter",
      body: { lora_name: "arl-policy-v2" },
      answer: "text",
    });
    expect(vllmWire.servedModel("base", 2, { lora: true })).toBe("arl-policy-v2");
    expect(vllmWire.servedModel("base", 0, { lora: true })).toBe("base");
    expect(vllmWire.servedModel("base", 2, { lora: false })).toBe("base");
  });

  it("launches with processed log-probs, neutral generation defaults and development-mode routes", () => {
    const options = {
      model: "m",
      host: "127.0.0.1",
      port: 8001,
      seed: 3,
      dtype: "bfloat16",
      gpus: 2,
      maxModelLen: 4096,
      loraRank: 12,
      python: null,
    } as const;
    const launch = vllmWire.launchCommand(options);
    const flags =
      "--host 127.0.0.1 --port 8001 --seed 3 --dtype bfloat16 --tensor-parallel-size 2 --logprobs-mode processed_logprobs --generation-config vllm --max-model-len 4096 --enable-lora --max-lora-rank 16";
    expect(launch.command).toBe("vllm");
    expect(launch.args.join(" ")).toBe(`serve m ${flags}`);
    expect(launch.env).toEqual({ VLLM_SERVER_DEV_MODE: "1", VLLM_ALLOW_RUNTIME_LORA_UPDATING: "True" });
    // --engine-python: the module form, which also runs the CPU build (no `vllm` package metadata).
    const module = vllmWire.launchCommand({ ...options, python: "/opt/vllm/bin/python" });
    expect([module.command, ...module.args].join(" ")).toBe(
      `/opt/vllm/bin/python -m vllm.entrypoints.openai.api_server --model m ${flags}`,
    );
    expect(module.env).toEqual(launch.env);
    expect([vllmMaxLoraRank(1), vllmMaxLoraRank(8), vllmMaxLoraRank(300)]).toEqual([1, 8, 320]);
    expect(() => vllmMaxLoraRank(1024)).toThrow(/above vLLM's largest --max-lora-rank \(512\)/);
  });
});

describe("SGLang wire", () => {
  it("sends input ids with the plan's sampling and the request's seed", () => {
    const call = sglangWire.generate(request);
    expect(call).toMatchObject({ method: "POST", path: "/generate" });
    const body = bodyOf(call);
    expect(body).toMatchObject({ input_ids: [151644, 872, 198], return_logprob: true, stream: false });
    expect(body.sampling_params).toMatchObject({
      max_new_tokens: 4,
      top_k: -1,
      stop_token_ids: [151645, 151643],
      sampling_seed: 7,
      no_stop_trim: true,
    });
    expect(body).not.toHaveProperty("return_sampling_mask");
    expect(body).not.toHaveProperty("lora_path");
    expect(bodyOf(sglangWire.generate({ ...request, model: adapterName(4) })).lora_path).toBe("arl-policy-v4");
  });

  it("takes the log-probs of the truncated distribution from the sampling mask when top-k is finite", () => {
    const topK = { ...request, topK: 40 };
    expect(bodyOf(sglangWire.generate(topK)).return_sampling_mask).toBe(true);
    const answer = sglangAnswer({
      output_token_sampling_logprobs: [-0.125, -0.0625],
      output_token_sampling_mask: [[9707], [151645]],
    });
    expect(Array.from(sglangWire.parseGeneration(answer, topK).logprobs)).toEqual([-0.125, -0.0625]);
    expect(Array.from(sglangWire.parseGeneration(answer, request).logprobs)).toEqual([-0.5, -0.25]);
    expect(protocolError(() => sglangWire.parseGeneration(sglangAnswer({}), topK))).toMatch(
      /output_token_sampling_logprobs = nothing/,
    );
  });

  it("reads ids, finish and weight version; the launch label is null", () => {
    const generation = sglangWire.parseGeneration(sglangAnswer({ weight_version: "4" }), request);
    expect(Array.from(generation.ids)).toEqual([9707, 151645]);
    expect(generation.finish).toBe("stop");
    expect(generation.weightVersion).toBe("4");
    expect(sglangWire.parseGeneration(sglangAnswer({ finish_reason: { type: "length", length: 2 } })).finish).toBe(
      "length",
    );
    expect(sglangWire.parseGeneration(sglangAnswer({})).weightVersion).toBeNull();
    expect(Array.from(sglangWire.parseGeneration(sglangAnswer({}), { ...request, temperature: 0 }).logprobs)).toEqual([
      0, 0,
    ]);
  });

  it("names the field when an answer cannot be read", () => {
    expect(
      protocolError(() =>
        sglangWire.parseGeneration(
          sglangAnswer({
            output_token_logprobs: [
              [-0.5, 9707, null],
              [-0.25, 13, null],
            ],
          }),
        ),
      ),
    ).toMatch(/output_token_logprobs\[1\]\[1\] = 13; expected the output id at 1 \(151645\)/);
    expect(
      protocolError(() =>
        sglangWire.parseGeneration(sglangAnswer({ finish_reason: { type: "abort", message: "oom" } })),
      ),
    ).toMatch(/finish_reason\.type = "abort"/);
    expect(protocolError(() => sglangWire.parseGeneration(sglangAnswer({ finish_reason: null })))).toMatch(
      /finish_reason = null; expected an object/,
    );
    expect(protocolError(() => sglangWire.parseGeneration({ output_ids: [1] }))).toMatch(/meta_info = nothing/);
  });

  it("syncs weights from disk with their version, adapters by name, and launches in deterministic mode", () => {
    expect(sglangWire.weightSync("/w", 3, { lora: false })).toEqual([
      {
        method: "POST",
        path: "/update_weights_from_disk",
        body: { model_path: "/w", weight_version: "3", flush_cache: true },
      },
    ]);
    expect(sglangWire.weightSync("/w", 3, { lora: true })).toEqual([
      { method: "POST", path: "/load_lora_adapter", body: { lora_name: "arl-policy-v3", lora_path: "/w" } },
    ]);
    expect(sglangWire.health()).toEqual({ method: "GET", path: "/health_generate" });
    const options = {
      model: "m",
      host: "0.0.0.0",
      port: 30000,
      seed: 1,
      dtype: "float32",
      gpus: 1,
      maxModelLen: null,
      loraRank: 8,
      python: null,
    } as const;
    const launch = sglangWire.launchCommand(options);
    const args =
      "-m sglang.launch_server --model-path m --host 0.0.0.0 --port 30000 --random-seed 1 --dtype float32 --tp-size 1 --enable-deterministic-inference --enable-lora --max-lora-rank 8 --lora-target-modules all";
    expect([launch.command, ...launch.args].join(" ")).toBe(`python ${args}`);
    const own = sglangWire.launchCommand({ ...options, python: "/opt/sglang/bin/python" });
    expect([own.command, ...own.args].join(" ")).toBe(`/opt/sglang/bin/python ${args}`);
  });
});

describe("engine wires", () => {
  it("are found by the plan's engine name", () => {
    expect(engineWire("vllm")).toBe(vllmWire);
    expect(engineWire("sglang")).toBe(sglangWire);
  });

  it("name adapters by version and recognise only their own names", () => {
    expect(adapterVersion(adapterName(12))).toBe(12);
    expect([
      adapterVersion("Qwen/Qwen2.5-0.5B"),
      adapterVersion("arl-policy-v"),
      adapterVersion("arl-policy-v01"),
    ]).toEqual([null, null, null]);
  });
});
