// The one schema of the trainer protocol's requests (src/contracts/trainer-requests.ts): the
// committed JSON Schema the PyTorch trainer validates with is what the build writes, the
// requests the runtime builds pass it on the wire and pass the zod schemas decoded, and
// malformed ones fail both.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { REQUEST_METHODS, requestParams, type RequestMethod } from "../../src/contracts/trainer-requests.js";
import { renderTrainerSchema, TRAINER_SCHEMA_FILE } from "../../src/contracts/write-trainer-schema.js";
import { trainStepParams } from "../../src/runtime/update/train-batches.js";
import { decodeFrame, encodeFrame } from "../../src/trainer/protocol/framing.js";
import { PROTOCOL_NAME, PROTOCOL_VERSION, ragged } from "../../src/contracts/trainer-protocol.js";
import { TinyTrainer } from "../../src/trainer/embedded/trainer.js";
import { lower } from "../plan/support.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const committed = readFileSync(path.join(repo, TRAINER_SCHEMA_FILE), "utf8");

const ajv = new Ajv2020({ strict: false, allErrors: true });
const validateWire = ajv.compile(JSON.parse(committed) as object);

/** The message of a request frame as the wire carries it: bulk arrays as {"$array": k}. */
function wire(method: string, params: unknown): unknown {
  const frame = encodeFrame({ id: 7, method, params });
  const headerLength = frame.readUInt32LE(4);
  return (JSON.parse(frame.subarray(12, 12 + headerLength).toString("utf8")) as { message: unknown }).message;
}

function wireErrors(method: string, params: unknown): string[] {
  return validateWire(wire(method, params))
    ? []
    : (validateWire.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ""}`);
}

function zodErrors(method: RequestMethod, params: unknown): string[] {
  // Decoded as the trainer receives it (typed arrays back in place).
  const r = requestParams[method].safeParse((decodeFrame(encodeFrame({ params })) as { params: unknown }).params);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}

/** What the runtime sends for the quick start (orchestrator.ts, policy.ts, update.ts). */
function runtimeRequests(): [RequestMethod, unknown][] {
  const [lowered] = lower(path.join(repo, "experiments", "quickstart.arl"));
  const plan = lowered!.plan;
  const ids = Int32Array.from([1, 5, 9, 2, 7, 11, 12, 2]);
  const sequence = {
    ids,
    roles: Uint8Array.from([0, 1, 1, 1, 3, 3, 3, 3]),
    advantages: new Float32Array(ids.length).fill(0.5),
    oldLogprobs: new Float32Array(ids.length).fill(-1),
    refLogprobs: new Float32Array(ids.length).fill(-1.1),
    group: "g0",
  };
  const a = plan.algorithm;
  return [
    ["handshake", { protocol: PROTOCOL_NAME, version: PROTOCOL_VERSION, runtime: { name: "arl", version: "0.1.0" } }],
    [
      "configure",
      {
        seed: plan.seed,
        policy: plan.policy,
        algorithm: { optimizer: a.optimizer, critic: a.critic, clip: a.clip, kl: a.kl },
        vocabulary: ["take", "key"],
        behaviour_policy: true,
      },
    ],
    ["encode", { messages: [{ role: "user", content: "take key" }], add_generation_prompt: true }],
    ["decode", { ids: ragged([ids], Int32Array) }],
    ["tokenize", { texts: ["<tool_call>\n", ""] }],
    [
      "generate",
      {
        prompts: ragged([ids], Int32Array),
        max_new_tokens: 8,
        temperature: 1,
        top_p: 1,
        top_k: 0,
        stop_ids: [2],
        seeds: Int32Array.from([3]),
        policy: "behaviour",
      },
    ],
    [
      "logprobs",
      {
        ids: ragged([ids], Int32Array),
        policy: "reference",
        sampling: { temperature: 1, top_p: 1, top_k: 0 },
        mask: ragged([new Uint8Array(ids.length)], Uint8Array),
      },
    ],
    ["values", { ids: ragged([ids], Int32Array) }],
    ["train_step", trainStepParams(plan, [sequence, { ...sequence, group: "g1" }])],
    ["train_step", { ...trainStepParams(plan, [sequence]), lr: 1e-4 }],
    [
      "train_step",
      {
        ...trainStepParams(plan, [sequence]),
        critic: {
          returns: ragged([sequence.advantages], Float32Array),
          old_values: ragged([sequence.oldLogprobs], Float32Array),
          value_clip: 0.2,
        },
      },
    ],
    [
      "configure",
      {
        seed: 1,
        policy: plan.policy,
        algorithm: {
          optimizer: a.optimizer,
          critic: { optimizer: a.optimizer, value_clip: null, init: "random" },
          clip: a.clip,
          kl: { ...a.kl, reference: { kind: "refresh", every: 4 } },
        },
        vocabulary: null,
      },
    ],
    ["snapshot", {}],
    ["reset_optimizer", {}],
    ["save", { path: "/tmp/ckpt" }],
    ["save", { path: "/tmp/ckpt", background: true }],
    ["saved", {}],
    ["load", { path: "/tmp/ckpt" }],
    ["eval_op", { op: "kl", input: { logp: [0], logp_ref: [0], estimator: "k3" } }],
    ["shutdown", {}],
  ];
}

describe("the trainer protocol's request schema", () => {
  it("is committed as the build writes it (runtime-gpu/arl_trainer/protocol.schema.json)", () => {
    const pkg = JSON.parse(readFileSync(path.join(repo, "package.json"), "utf8")) as { scripts: { build: string } };
    expect(pkg.scripts.build).toContain("node dist/contracts/write-trainer-schema.js");
    expect(committed, `${TRAINER_SCHEMA_FILE} is stale: run npm run build`).toBe(renderTrainerSchema());
  });

  it("has the params of every method the embedded trainer announces", () => {
    expect([...REQUEST_METHODS].sort()).toEqual([...new TinyTrainer().handshake().capabilities.methods].sort());
  });

  it("accepts the requests the runtime sends, on the wire and decoded", () => {
    const requests = runtimeRequests();
    expect(new Set(requests.map(([m]) => m))).toEqual(new Set(REQUEST_METHODS));
    for (const [method, params] of requests) {
      expect(wireErrors(method, params), method).toEqual([]);
      expect(zodErrors(method, params), method).toEqual([]);
    }
  });

  it('describes bulk arrays as {"$array": k} descriptors with their dtype', () => {
    const schema = JSON.parse(committed) as { $defs: Record<string, { "x-dtype"?: string; required?: string[] }> };
    expect(schema.$defs.bulk_int32).toMatchObject({ "x-dtype": "int32", required: ["$array"] });
    expect(wireErrors("decode", { ids: { values: [1, 2], offsets: [0, 2] } })).not.toEqual([]);
    // The dtype is the frame's to say; the decoded array's type is checked in code.
    expect(zodErrors("decode", { ids: ragged([[1, 2]], Float32Array) })).toEqual([
      "ids.values: expected a bulk int32 array",
    ]);
  });

  it("refuses malformed requests in both forms", () => {
    const [, generate] = runtimeRequests().find(([m]) => m === "generate")!;
    const bad: [RequestMethod, unknown, string][] = [
      ["generate", { ...(generate as object), policy: "reference" }, "policy"],
      ["generate", { ...(generate as object), seeds: undefined }, "seeds"],
      ["generate", { ...(generate as object), max_new_tokens: -1 }, "max_new_tokens"],
      ["encode", { messages: [{ role: "pool", content: "x" }], add_generation_prompt: false }, "messages.0.role"],
      ["save", { path: "" }, "path"],
    ];
    for (const [method, params, field] of bad) {
      expect(wireErrors(method, params), `${method} ${field}`).not.toEqual([]);
      expect(zodErrors(method, params).join("; "), `${method} ${field}`).toContain(field);
    }
    expect(validateWire({ id: 1, method: "fine_tune", params: {} })).toBe(false);
  });

  it("is what the embedded trainer validates with: a malformed request is an invalid_request naming the field", () => {
    const t = new TinyTrainer();
    const [, generate] = runtimeRequests().find(([m]) => m === "generate")!;
    expect(() => t.request("generate", { ...(generate as object), policy: "reference" })).toThrow(
      expect.objectContaining({ code: "invalid_request", message: expect.stringMatching(/^generate: policy: /) }),
    );
    expect(() => t.request("save", {})).toThrow(
      expect.objectContaining({ code: "invalid_request", message: expect.stringContaining("path") }),
    );
    // Well formed, but before configure: the order check follows the schema's.
    expect(() => t.request("generate", generate)).toThrow(
      expect.objectContaining({ code: "invalid_request", message: expect.stringContaining("send 'configure' first") }),
    );
  });
});
