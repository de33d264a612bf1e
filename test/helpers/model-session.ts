// What the model session's tests (test/gateway/model-session*.test.ts) share: builtin:tiny with
// the counter plan, started once per file (useTinySession), sessions and chat requests over it,
// the policy with its encode calls recorded, and the GatewayError a call rejects with.
import { beforeAll, expect } from "vitest";
import type { Plan } from "../../src/plan/schema.js";
import { DEFAULT_TEMPLATE } from "../../src/episode/conversation.js";
import { GatewayError, type ChatRequest, type GatewayMessage } from "../../src/inference/gateway/contract.js";
import { ModelSession, type ModelSessionOptions } from "../../src/inference/gateway/model-session.js";
import { harnessVocabulary } from "../../src/episode/harness.js";
import type { TrainerPolicy } from "../../src/episode/policy.js";
import { EOS } from "../../src/trainer/embedded/tokenizer.js";
import type { TinyTrainer } from "../../src/trainer/embedded/trainer.js";
import { compilePlans, counterSpec } from "./plans.js";
import { RecordingPolicy } from "../gateway/recording-policy.js";
import { tinyPolicy } from "./tiny-policy.js";

/** Words the tiny vocabulary holds besides the harness's. */
const WORDS = ["hello", "world", "again", "counter", "at", "edited"];

/** The file's plan, trainer and policy (useTinySession), read through these live bindings. */
export let plan: Plan;
export let tiny: TinyTrainer;
export let policy: TrainerPolicy;

/** Compiles the counter plan and starts builtin:tiny before the file's tests. */
export function useTinySession(): void {
  beforeAll(async () => {
    plan = compilePlans(counterSpec(`harness { max_turns: 4, system_prompt: "Count." }`))[0]!;
    ({ tiny, policy } = await tinyPolicy(plan, [...harnessVocabulary(plan), ...WORDS]));
  });
}

export const STEP_TOOL = {
  type: "function",
  function: { name: "step", description: "advance the counter", parameters: { type: "object", properties: {} } },
};

export function harness(h: Partial<Plan["harness"]>): Plan {
  return { ...plan, harness: { ...plan.harness, ...h } };
}

export function session(o: Partial<ModelSessionOptions> & { base?: number } = {}): ModelSession {
  const base = o.base ?? 0;
  return new ModelSession({
    policy,
    template: DEFAULT_TEMPLATE,
    stopIds: [EOS],
    plan,
    seed: (call) => 1000 * base + call,
    ...o,
  });
}

export function chat(messages: readonly GatewayMessage[], extra: Partial<ChatRequest> = {}): ChatRequest {
  return {
    messages,
    tools: [],
    toolChoice: "auto",
    maxTokens: null,
    stop: [],
    temperature: null,
    topP: null,
    seed: null,
    logprobs: false,
    ...extra,
  };
}

export const FIRST: GatewayMessage[] = [
  { role: "system", content: "Count." },
  { role: "user", content: "hello world" },
];

export const ids = (a: ArrayLike<number>) => Array.from(a);

export async function rejection(p: Promise<unknown>): Promise<GatewayError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

/** The tiny policy with its encode calls recorded; `texts`: replies it generates instead of sampling (encoded by the tiny tokenizer, then the end-of-turn token). */
export const recording = (texts?: readonly string[]) => new RecordingPolicy({ policy, tiny }, texts);
