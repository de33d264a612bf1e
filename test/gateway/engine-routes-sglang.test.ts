// The gateway in engine mode answering SGLang's native generate over builtin:tiny: the runtime's
// SGLang wire against it, its answers' ids, log-probs and versions, and its weight loading (the
// setup: engine-routes.test.ts).
import path from "node:path";
import { describe, expect, it } from "vitest";
import { engineWire } from "../../src/inference/engine/wires.js";
import {
  PROMPT,
  dir,
  before,
  after,
  serve,
  call,
  args,
  generatedBy,
  useEngineCheckpoints,
} from "../helpers/engine-serve.js";

interface SglangAnswer {
  text: string;
  output_ids: number[];
  meta_info: {
    output_token_logprobs: [number, number, string | null][];
    finish_reason: { type: string };
    weight_version: string;
    prompt_tokens: number;
    completion_tokens: number;
  };
}

useEngineCheckpoints();

describe("SGLang's native generate", () => {
  it("answers ids, log-prob triples and the weight version; update_weights_from_disk changes both", async () => {
    const { tiny, gateway } = await serve("sglang");
    tiny.load(before);
    const first = (await call(gateway.origin, "POST", "/generate", engineWire("sglang").generate(args(5)).body))
      .json as SglangAnswer;
    expect(first.meta_info).toMatchObject({
      weight_version: "default",
      prompt_tokens: PROMPT.length,
      completion_tokens: first.output_ids.length,
    });
    expect(first.meta_info.output_token_logprobs.map((t) => t[1])).toEqual(first.output_ids);
    expect(["stop", "length"]).toContain(first.meta_info.finish_reason.type);
    expect((await call(gateway.origin, "GET", "/health_generate")).status).toBe(200);
    const update = await call(gateway.origin, "POST", "/update_weights_from_disk", {
      model_path: after,
      weight_version: "1",
      flush_cache: true,
    });
    expect(update).toMatchObject({ status: 200, json: { success: true } });
    expect((await call(gateway.origin, "GET", "/get_model_info")).json).toMatchObject({ weight_version: "1" });
    const second = (await call(gateway.origin, "POST", "/generate", engineWire("sglang").generate(args(5)).body))
      .json as SglangAnswer;
    expect(second.meta_info.weight_version).toBe("1");
    const lps = (a: SglangAnswer) => a.meta_info.output_token_logprobs.map((t) => t[0]);
    expect(lps(second)).not.toEqual(lps(first));
    const direct = generatedBy(tiny, after, 5);
    expect({ ids: second.output_ids, lps: lps(second) }).toEqual({
      ids: direct.token_ids,
      lps: direct.logprobs.token_logprobs,
    });
    const missing = await call(gateway.origin, "POST", "/update_weights_from_disk", {
      model_path: path.join(dir, "missing"),
    });
    expect(missing).toMatchObject({ status: 400, json: { success: false } });
    const batch = await call(gateway.origin, "POST", "/generate", {
      ...(engineWire("sglang").generate(args(1)).body as Record<string, unknown>),
      input_ids: [PROMPT],
    });
    expect(batch).toMatchObject({ status: 400, json: { error: { param: "input_ids[0]" } } });
  });
});
