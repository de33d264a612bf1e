// The embedded CPU trainer (builtin:tiny) as a process: a protocol session through the real
// process (dist/), and the conformance vectors through `arl conformance --trainer local`.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { TrainerClient } from "../../src/trainer/protocol/client.js";
import { ragged, row } from "../../src/contracts/trainer-protocol.js";
import { runArl } from "../helpers/cli.js";
import { configureParams } from "../helpers/tiny-trainer.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));

const mainJs = path.join(repo, "dist", "trainer", "embedded", "main.js");

describe("builtin:tiny through the protocol (real process)", () => {
  // A small shape, asked for in the model's name (the process reads no environment for it).
  const small = (seed: number) => ({
    ...configureParams(seed),
    policy: { ...configureParams(seed).policy, model: "builtin:tiny?hidden=48&embed=24" },
  });
  let client: TrainerClient;
  beforeAll(async () => {
    expect(existsSync(mainJs), "run `npm run build` first").toBe(true);
    client = await TrainerClient.start({ file: process.execPath, args: [mainJs] }, "test");
    return async () => client.shutdown();
  });

  it("handshakes, configures, encodes/decodes, generates deterministically and recomputes the sampled log-probs", async () => {
    expect(client.handshakeResult).toMatchObject({
      protocol: "arl-trainer",
      version: 1,
      trainer: { name: "arl-embedded" },
      capabilities: { value_head: true, keep_sampling_mask: true, world_size: 1, device: "cpu" },
    });
    expect(client.handshakeResult!.capabilities.methods).toEqual(
      expect.arrayContaining(["generate", "logprobs", "train_step", "save", "load", "eval_op"]),
    );
    const configured = await client.request("configure", small(7));
    expect(configured.model.name).toBe("builtin:tiny");
    expect(configured.tokenizer).toMatchObject({ bos_id: 1, eos_id: 2, pad_id: 0 });

    const { ids } = await client.request("encode", {
      messages: [{ role: "user", content: "You are in the kitchen. You see a key." }],
      add_generation_prompt: true,
    });
    const { texts } = await client.request("decode", { ids });
    expect(texts).toEqual(["You are in the kitchen. You see a key."]);

    const prompt = row(ids, 0);
    const prompts = ragged([prompt, prompt, prompt.subarray(0, 4)], Int32Array);
    for (const sampling of [
      { temperature: 1, top_p: 1, top_k: 0 },
      { temperature: 0.8, top_p: 0.9, top_k: 20 },
    ]) {
      const request = {
        prompts,
        max_new_tokens: 12,
        ...sampling,
        stop_ids: [2],
        seeds: Int32Array.from([11, 12, 11]),
        policy: "current" as const,
      };
      const a = await client.request("generate", request);
      const b = await client.request("generate", request);
      expect(Array.from(a.ids.values)).toEqual(Array.from(b.ids.values));
      expect(Array.from(a.logprobs.values)).toEqual(Array.from(b.logprobs.values));
      expect(a.ids.offsets[1]! - a.ids.offsets[0]!).toBeGreaterThan(0);
      const other = await client.request("generate", { ...request, seeds: Int32Array.from([99, 98, 97]) });
      expect(Array.from(other.ids.values)).not.toEqual(Array.from(a.ids.values));
      // The sampled log-probs are those of the truncated distribution: recomputing them with the
      // same keep-sampling mask gives them back.
      const full = [0, 1, 2].map((i) => Int32Array.from([...row(prompts, i), ...row(a.ids, i)]));
      const { logprobs } = await client.request("logprobs", {
        ids: ragged(full, Int32Array),
        policy: "current",
        sampling,
      });
      [0, 1, 2].forEach((i) => {
        const sampled = row(a.logprobs, i);
        const recomputed = row(logprobs, i).subarray(row(prompts, i).length);
        sampled.forEach((lp, k) => expect(Math.abs(lp - recomputed[k]!)).toBeLessThan(1e-5));
        if (sampling.top_k > 0) sampled.forEach((lp) => expect(lp).toBeGreaterThan(Math.log(1e-9)));
      });
    }
  });

  it("saves atomically and loads back bit-identically", async () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), "arl-tiny-")), "ckpt");
    const prompts = ragged([Int32Array.from([5, 12, 13, 2, 7])], Int32Array);
    const request = {
      prompts,
      max_new_tokens: 10,
      temperature: 1,
      top_p: 1,
      top_k: 0,
      stop_ids: [2],
      seeds: Int32Array.from([3]),
      policy: "current" as const,
    };
    const before = await client.request("generate", request);
    const saved = await client.request("save", { path: dir });
    expect(saved.files.sort()).toEqual(["model.safetensors", "optimizer.safetensors", "trainer.json"]);
    expect(readdirSync(path.dirname(dir))).toEqual(["ckpt"]); // no temp directory left behind
    const header = readFileSync(path.join(dir, "model.safetensors"));
    const n = Number(header.readBigUInt64LE(0));
    expect(JSON.parse(header.subarray(8, 8 + n).toString("utf8"))["policy.wh"]).toMatchObject({
      dtype: "F32",
      shape: [48, 144],
    });
    await client.request("configure", small(8)); // other weights...
    const other = await client.request("generate", request);
    expect(Array.from(other.logprobs.values)).not.toEqual(Array.from(before.logprobs.values));
    await client.request("load", { path: dir }); // ...until the checkpoint is back
    const after = await client.request("generate", request);
    expect(Array.from(after.ids.values)).toEqual(Array.from(before.ids.values));
    expect(Array.from(after.logprobs.values)).toEqual(Array.from(before.logprobs.values));
  });

  it("policy_only saves the policy's weights alone (an inference server's weight sync), and loading them sets the policy and its version", async () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), "arl-tiny-")), "v3");
    const prompts = ragged([Int32Array.from([5, 12, 13, 2, 7])], Int32Array);
    const request = {
      prompts,
      max_new_tokens: 10,
      temperature: 1,
      top_p: 1,
      top_k: 0,
      stop_ids: [2],
      seeds: Int32Array.from([3]),
      policy: "current" as const,
    };
    const before = await client.request("generate", request);
    const saved = await client.request("save", { path: dir, policy_only: true });
    expect(saved.files.sort()).toEqual(["model.safetensors", "trainer.json"]);
    expect(readdirSync(dir).sort()).toEqual(["model.safetensors", "trainer.json"]);
    const header = readFileSync(path.join(dir, "model.safetensors"));
    const names = Object.keys(
      JSON.parse(header.subarray(8, 8 + Number(header.readBigUInt64LE(0))).toString("utf8")),
    ).filter((k) => k !== "__metadata__");
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((k) => !k.startsWith("policy."))).toEqual([]);
    await client.request("configure", small(8));
    const loaded = await client.request("load", { path: dir });
    expect(loaded.policy_version).toBe(saved.policy_version);
    const after = await client.request("generate", request);
    expect(Array.from(after.logprobs.values)).toEqual(Array.from(before.logprobs.values));
  });
});

describe("arl conformance --trainer local", () => {
  it("passes the shared vectors through the embedded trainer's eval_op", async () => {
    const run = await runArl(["conformance", "--trainer", "local", "test/conformance"], { cwd: repo });
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^\d+ passed, 0 failed\n$/);
    expect(run.code).toBe(0);
  });
});
