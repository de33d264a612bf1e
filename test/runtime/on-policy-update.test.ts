// The RL update's single on-policy step (src/runtime/update/on-policy.ts): with one epoch of one
// minibatch on a synchronous batch, a trainer that announces on_policy_step gets train_step with
// old_logprobs null and no `logprobs` recompute of the current weights; anything that reads the old
// log-probs before the step (more steps, asynchronous rollout, a KL in the reward, off-policy
// masking) keeps the recompute, and so does a trainer without the capability.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { HandshakeResult } from "../../src/contracts/trainer-protocol.js";
import { envKinds } from "../../src/envs/registry.js";
import { takesOnPolicyStep } from "../../src/runtime/update/on-policy.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { TrainerClient } from "../../src/trainer/protocol/client.js";
import { compilePlans, countingExperiment, scriptedTrainerScript } from "../helpers/plans.js";

// Without the keep-sampling mask: the update recomputes the old log-probs unless it takes the on-policy step.
const KEEP_OFF = "mask { keep_sampling_mask: false }";
const plan = (algorithm = "", rollout = "iterations: 2", mask = KEEP_OFF) =>
  compilePlans(
    countingExperiment({
      name: "onpolicy",
      seed: 3,
      rollout,
      evaluation: "eval { every: 2, tasks: 2, k: [1], before_training: false }",
      extra: mask,
    }).replace("algorithm {", `algorithm {\n    ${algorithm}`),
  )[0]!;
const announcing = { capabilities: { on_policy_step: true } } as unknown as HandshakeResult;
const silent = { capabilities: {} } as unknown as HandshakeResult;

describe("takesOnPolicyStep", () => {
  it("holds for one synchronous step on a trainer that announces on_policy_step", () => {
    expect(takesOnPolicyStep(plan(), announcing)).toBe(true);
    expect(takesOnPolicyStep(plan(), silent)).toBe(false);
    expect(takesOnPolicyStep(plan(), undefined)).toBe(false);
  });

  it("does not hold where the old log-probs are read before the step or differ from the current weights'", () => {
    const cases: [string, string, string][] = [
      ["epochs: 2", "iterations: 2", KEEP_OFF],
      ["minibatches: 2", "iterations: 2", KEEP_OFF],
      ["", "iterations: 2, async { max_policy_lag: 1 }", KEEP_OFF],
      ["", "iterations: 2", "mask { keep_sampling_mask: false, off_policy_sequence_threshold: 0.5 }"],
      ["kl { coef: 0.1, placement: reward, reference: initial }", "iterations: 2", KEEP_OFF],
      ["", "iterations: 2", "mask { keep_sampling_mask: false, tis { cap: 2.0 } }"],
    ];
    for (const [algorithm, rollout, mask] of cases)
      expect(takesOnPolicyStep(plan(algorithm, rollout, mask), announcing), `${algorithm} ${rollout} ${mask}`).toBe(
        false,
      );
    // A KL in the loss reads only the reference's log-probs.
    expect(takesOnPolicyStep(plan("kl { coef: 0.1, placement: loss, reference: initial }"), announcing)).toBe(true);
    // With the keep-sampling mask too: the update then does not read generation's log-probs.
    expect(takesOnPolicyStep(plan("", "iterations: 2", ""), announcing)).toBe(true);
  });
});

describe("the RL update", () => {
  afterEach(() => vi.restoreAllMocks());

  async function requests(
    p: ReturnType<typeof plan>,
    env: Record<string, string>,
  ): Promise<{ control: string[]; oldLogprobs: unknown[] }> {
    const control: string[] = [];
    const oldLogprobs: unknown[] = [];
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called back with .call(this) on the spied instance
    const request = TrainerClient.prototype.request;
    vi.spyOn(TrainerClient.prototype, "request").mockImplementation(function (this: TrainerClient, method, params) {
      if (method === "logprobs") control.push(`logprobs ${(params as { policy: string }).policy}`);
      if (method === "train_step") {
        control.push("train_step");
        oldLogprobs.push((params as { old_logprobs: unknown }).old_logprobs);
      }
      return request.call(this, method, params);
    });
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-onpolicy-")), p);
    await executePlan({
      plan: p,
      runDir,
      trainer: { file: process.execPath, args: [scriptedTrainerScript], env },
      envs: envKinds,
      log: () => undefined,
    });
    return { control, oldLogprobs };
  }

  it("sends old_logprobs null and recomputes nothing but the first iteration's preflight", async () => {
    const { control, oldLogprobs } = await requests(plan(), { DOUBLE_ON_POLICY: "1" });
    expect(control).toEqual(["logprobs current", "train_step", "train_step"]);
    expect(oldLogprobs).toEqual([null, null]);
  });

  it("recomputes the old log-probs for a trainer without on_policy_step", async () => {
    const { control, oldLogprobs } = await requests(plan(), {});
    expect(control).toEqual(["logprobs current", "logprobs current", "train_step", "logprobs current", "train_step"]);
    expect(oldLogprobs.every((o) => o !== null && typeof o === "object")).toBe(true);
  });
});
