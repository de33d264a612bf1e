// The embedded model's shape comes from its name in the plan (builtin:tiny?hidden=N...), never
// from the environment: the same plan builds the same model everywhere, and another shape is
// another plan hash.
import { afterEach, describe, expect, it } from "vitest";
import type { ConfigureParams } from "../../src/contracts/trainer-protocol.js";
import { TINY_SHAPE_BOUNDS } from "../../src/plan/bounds.js";
import { parseTinyModel, TINY_DEFAULT_SHAPE } from "../../src/plan/model-name.js";
import { defaultOptions, TinyTrainer } from "../../src/trainer/embedded/trainer.js";
import { hashesOf } from "../plan/support.js";

function configure(model: string): ConfigureParams {
  return {
    seed: 1,
    policy: { model, chat_template: null, sampling: { temperature: 1, top_p: 1, top_k: 0, max_new_tokens: 8 } },
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
      clip: { low: 0.2, high: 0.2, dual: null },
      kl: { coef: 0, estimator: "k3", placement: "loss", reference: null },
    },
    vocabulary: ["take", "key"],
  };
}

describe("builtin:tiny's shape", () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it("is read from the model's name, with the default shape for what it leaves out", () => {
    expect(parseTinyModel("builtin:tiny")).toEqual({ shape: TINY_DEFAULT_SHAPE });
    expect(parseTinyModel("builtin:tiny?hidden=32&embed=16&heads=2&key=8")).toEqual({
      shape: { embed: 16, hidden: 32, heads: 2, keyDim: 8 },
    });
    expect(parseTinyModel("builtin:tiny?hidden=32")).toEqual({ shape: { ...TINY_DEFAULT_SHAPE, hidden: 32 } });
  });

  it("refuses names and values the trainer cannot build, saying why", () => {
    expect(parseTinyModel("hf:Qwen/Qwen2.5-0.5B")).toMatchObject({
      error: expect.stringContaining("serves only 'builtin:tiny'"),
    });
    expect(parseTinyModel("builtin:tiny?layers=2")).toMatchObject({
      error: expect.stringContaining("unknown shape parameter 'layers'"),
    });
    expect(parseTinyModel("builtin:tiny?hidden=0")).toMatchObject({
      error: expect.stringContaining("positive integer"),
    });
    expect(parseTinyModel("builtin:tiny?hidden=1e3")).toMatchObject({
      error: expect.stringContaining("positive integer"),
    });
    expect(parseTinyModel(`builtin:tiny?hidden=${TINY_SHAPE_BOUNDS.hidden.max + 1}`)).toMatchObject({
      error: expect.stringContaining(`above its bound ${TINY_SHAPE_BOUNDS.hidden.max}`),
    });
  });

  it("ignores ARL_TINY_* in the environment: the trainer builds what the model names", async () => {
    process.env.ARL_TINY_HIDDEN = "8";
    process.env.ARL_TINY_EMBED = "8";
    const t = new TinyTrainer(defaultOptions());
    await t.init();
    const plain = t.configure(configure("builtin:tiny")).model.parameters;
    const small = t.configure(configure("builtin:tiny?hidden=8&embed=8")).model.parameters;
    expect(small).toBeLessThan(plain);
    delete process.env.ARL_TINY_HIDDEN;
    delete process.env.ARL_TINY_EMBED;
    expect(new TinyTrainer(defaultOptions()).configure(configure("builtin:tiny")).model.parameters).toBe(plain);
    expect(() => t.configure(configure("builtin:tiny?depth=3"))).toThrow(/unknown shape parameter 'depth'/);
  });

  it("is part of the plan hash", () => {
    const spec = (model: string) => ({
      "spec.arl": `import "std/envs/rooms" as rooms\nexperiment e {\n  policy { model: "${model}" }\n  env world extends rooms.world {}\n}\n`,
    });
    expect(hashesOf(spec("builtin:tiny?hidden=32"))).not.toEqual(hashesOf(spec("builtin:tiny")));
  });
});
