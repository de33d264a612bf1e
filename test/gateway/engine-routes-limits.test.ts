// The gateway in engine mode over builtin:tiny at its limits: generation bounded by the model's
// context and the request, and a damaged checkpoint that fails to load without changing the
// weights served (the setup: engine-routes.test.ts).
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { engineWire } from "../../src/inference/engine/wires.js";
import {
  PROMPT,
  LIMITS,
  dir,
  before,
  serve,
  call,
  args,
  vllmBody,
  send,
  choiceOf,
  useEngineCheckpoints,
} from "../helpers/engine-serve.js";

useEngineCheckpoints();

describe("bounded generation", () => {
  it("vllm: refuses max_tokens past the plan's cap and a prompt past the context with a 400 naming the field, as vLLM does", async () => {
    const { gateway, generateRequests } = await serve("vllm");
    const body = (extra: Record<string, unknown>) => ({ ...vllmBody(1), ...extra });
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [
        { max_tokens: 1e9, ignore_eos: true },
        "max_tokens",
        /max_tokens is 1000000000, more than this server generates for one request \(32/,
      ],
      [
        { prompt: Array.from({ length: 1_000_000 }, () => 5) },
        "prompt",
        /maximum context length is 64 tokens, and the prompt has 1000000/,
      ],
      [
        { prompt: Array.from({ length: 40 }, () => 5), max_tokens: 30 },
        "max_tokens",
        /ask for at most 24 or shorten the prompt/,
      ],
    ];
    for (const [extra, param, message] of cases) {
      const answer = await call(gateway.origin, "POST", "/v1/completions", body(extra));
      expect(answer.status, param).toBe(400);
      expect(answer.json).toMatchObject({
        error: { param, code: 400, message: expect.stringMatching(message) as unknown },
      });
    }
    expect(generateRequests()).toBe(0);
    // Without max_tokens, the default (16) is cut to what the context leaves.
    const cut = await call(gateway.origin, "POST", "/v1/completions", {
      prompt: Array.from({ length: 60 }, () => 5),
      ignore_eos: true,
      return_token_ids: true,
    });
    expect(cut.status).toBe(200);
    expect(choiceOf(cut.json).token_ids.length).toBeLessThanOrEqual(4);
  });

  it("sglang: the same bounds on sampling_params.max_new_tokens and input_ids", async () => {
    const { gateway } = await serve("sglang");
    const long = await call(gateway.origin, "POST", "/generate", {
      input_ids: PROMPT,
      sampling_params: { max_new_tokens: 1e9, ignore_eos: true },
    });
    expect(long).toMatchObject({ status: 400, json: { error: { param: "sampling_params.max_new_tokens" } } });
    const huge = await call(gateway.origin, "POST", "/generate", {
      input_ids: Array.from({ length: 1_000_000 }, () => 5),
    });
    expect(huge).toMatchObject({ status: 400, json: { error: { param: "input_ids" } } });
  });

  it("a generation at the cap does not hold back another client's: both are answered", async () => {
    const { gateway } = await serve("vllm", 20);
    const [long, short] = await Promise.all([
      call(gateway.origin, "POST", "/v1/completions", {
        ...vllmBody(1),
        max_tokens: LIMITS.maxNewTokens,
        ignore_eos: true,
        stop_token_ids: [],
        return_token_ids: true,
      }),
      call(gateway.origin, "POST", "/v1/completions", { ...vllmBody(2), max_tokens: 4, return_token_ids: true }),
    ]);
    expect([long.status, short.status]).toEqual([200, 200]);
    expect(choiceOf(long.json).token_ids).toHaveLength(LIMITS.maxNewTokens);
  });
});

describe("loading a damaged checkpoint", () => {
  /** `before` with model.safetensors replaced by what `make` puts there. */
  function damaged(name: string, make: (at: string) => void): string {
    const target = path.join(dir, name);
    mkdirSync(target);
    for (const f of ["optimizer.safetensors", "trainer.json"]) copyFileSync(path.join(before, f), path.join(target, f));
    make(path.join(target, "model.safetensors"));
    return target;
  }
  const lengthOnly = (n: bigint) => {
    const b = Buffer.alloc(10);
    b.writeBigUInt64LE(n);
    return b;
  };

  it("vllm: reload_weights of /dev/zero, garbage or a 2^62 header length is a 400 naming the file, and the old weights keep serving", async () => {
    const { gateway } = await serve("vllm");
    for (const [name, make] of [
      ["zero", (at: string) => symlinkSync("/dev/zero", at)],
      ["garbage", (at: string) => writeFileSync(at, "garbage")],
      ["huge", (at: string) => writeFileSync(at, lengthOnly(2n ** 62n))],
    ] as const) {
      const target = damaged(name, make);
      const answer = await call(gateway.origin, "POST", "/collective_rpc", {
        method: "reload_weights",
        kwargs: { weights_path: target },
      });
      expect(answer.status, name).toBe(400);
      expect((answer.json as { error: { message: string } }).error.message).toContain(
        path.join(target, "model.safetensors"),
      );
    }
    const served = await send(gateway.origin, engineWire("vllm").generate(args(5)));
    expect(served.status).toBe(200);
  });

  it("sglang: update_weights_from_disk of a damaged checkpoint is a 400 with success false naming the file", async () => {
    const { gateway } = await serve("sglang");
    const target = damaged("sglang-garbage", (at) => writeFileSync(at, "garbage"));
    const answer = await call(gateway.origin, "POST", "/update_weights_from_disk", { model_path: target });
    expect(answer).toMatchObject({
      status: 400,
      json: { success: false, message: expect.stringContaining(path.join(target, "model.safetensors")) as unknown },
    });
  });
});
