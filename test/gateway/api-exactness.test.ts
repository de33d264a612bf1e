// The three APIs are adapters onto one ModelSession (builtin:tiny, in-process): a Responses round
// trip (items sent back, or previous_response_id) and an Anthropic tool_use round trip continue
// one trajectory with the exact ids, exactly as chat's does; a rewritten history is a new sample
// whichever API sends it; sessions on the gateway's shared base URL are told apart by key; and
// the run's one tool-call validator compiles a tool's schema once for all its sessions.
import OpenAI from "openai";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolCallValidator } from "../../src/contracts/tool-calls.js";
import type { Plan } from "../../src/plan/schema.js";
import { Role } from "../../src/episode/buffer.js";
import { DEFAULT_TEMPLATE } from "../../src/episode/conversation.js";
import { ModelSession } from "../../src/inference/gateway/model-session.js";
import { startGateway } from "../../src/inference/gateway/server.js";
import { harnessVocabulary } from "../../src/episode/harness.js";
import type { TrainerPolicy } from "../../src/episode/policy.js";
import { EOS } from "../../src/trainer/embedded/tokenizer.js";
import type { TinyTrainer } from "../../src/trainer/embedded/trainer.js";
import { compilePlans, counterSpec } from "../helpers/plans.js";
import { tinyPolicy } from "../helpers/tiny-policy.js";
import { RecordingPolicy } from "./recording-policy.js";

const STEP = { name: "step", description: "advance the counter", parameters: { type: "object", properties: {} } };
const CALL = '<tool_call>{"name": "step", "arguments": {}}</tool_call>';

let plan: Plan;
let tiny: TinyTrainer;
let policy: TrainerPolicy;
let gateway: Awaited<ReturnType<typeof startGateway>>;

beforeAll(async () => {
  plan = compilePlans(counterSpec(`harness { max_turns: 4, system_prompt: "Count." }`))[0]!;
  ({ tiny, policy } = await tinyPolicy(plan, [...harnessVocabulary(plan), "hello", "world", "done"]));
  gateway = await startGateway({ log: () => undefined });
});
afterAll(async () => {
  await gateway.close();
});

function open(texts: readonly string[], validator?: ToolCallValidator) {
  const session = new ModelSession({
    policy: new RecordingPolicy({ policy, tiny }, texts),
    template: DEFAULT_TEMPLATE,
    stopIds: [EOS],
    plan,
    seed: (call) => call,
    ...(validator ? { validator } : {}),
  });
  return { session, handle: gateway.open(session) };
}

/** One trajectory: a single sample, no rewrite, every generated token trained as generated. */
function expectOneTrajectory(session: ModelSession, calls: number) {
  const r = session.record();
  expect(r.samples).toHaveLength(1);
  expect(r.rewrites).toBe(0);
  expect(r.turnEnds).toHaveLength(calls);
  expect(Array.from(r.roles).filter((x) => x === Role.generated)).toHaveLength(r.episode.tokens);
  expect(r.toolCalls[0]).toMatchObject({ name: "step", valid: true, result: "counter at 1" });
  return r;
}

describe("one model half for every API", () => {
  it("a Responses round trip with the items sent back continues one trajectory", async () => {
    const { session, handle } = open([CALL, "done"]);
    const client = new OpenAI({ baseURL: handle.baseUrl, apiKey: handle.apiKey, maxRetries: 0 });
    const input: ResponseInputItem[] = [{ role: "user", content: "hello world" }];
    const tools = [{ type: "function" as const, ...STEP, strict: false }];
    const first = await client.responses.create({ model: session.modelName, instructions: "Count.", input, tools });
    input.push(...(first.output as ResponseInputItem[]), {
      type: "function_call_output",
      call_id: "call_0",
      output: "counter at 1",
    });
    const second = await client.responses.create({ model: session.modelName, instructions: "Count.", input, tools });
    expect(second.output_text).toBe("done");
    await handle.close();
    const r = expectOneTrajectory(session, 2);
    // The second prompt is the first call's context and generated ids exactly, then the tool result.
    const raw = second as unknown as { prompt_token_ids: number[] };
    expect(raw.prompt_token_ids.slice(0, r.turnEnds[0]! + 1)).toEqual(
      Array.from(r.ids.subarray(0, r.turnEnds[0]! + 1)),
    );
  });

  it("a Responses round trip by previous_response_id continues it too", async () => {
    const { session, handle } = open([CALL, "done"]);
    const client = new OpenAI({ baseURL: handle.baseUrl, apiKey: handle.apiKey, maxRetries: 0 });
    const tools = [{ type: "function" as const, ...STEP, strict: false }];
    const first = await client.responses.create({
      model: session.modelName,
      instructions: "Count.",
      input: "hello world",
      tools,
    });
    await client.responses.create({
      model: session.modelName,
      instructions: "Count.",
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: "call_0", output: "counter at 1" }],
      tools,
    });
    await handle.close();
    expectOneTrajectory(session, 2);
  });

  it("an Anthropic tool_use round trip continues one trajectory; an edited history is a rewrite", async () => {
    const { session, handle } = open([CALL, "done", "hello"]);
    const post = async (messages: unknown[]) => {
      const response = await fetch(`${handle.anthropicBaseUrl}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": handle.apiKey },
        body: JSON.stringify({
          model: session.modelName,
          max_tokens: 64,
          system: "Count.",
          tools: [{ name: STEP.name, description: STEP.description, input_schema: STEP.parameters }],
          messages,
        }),
      });
      return (await response.json()) as { content: unknown[] };
    };
    const history: unknown[] = [{ role: "user", content: "hello world" }];
    const first = await post(history);
    history.push(
      { role: "assistant", content: first.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "call_0", content: "counter at 1" }] },
    );
    await post(history);
    expectOneTrajectory(session, 2);
    await post([{ role: "user", content: "hello again" }]);
    await handle.close();
    expect(session.record()).toMatchObject({ rewrites: 1, stepwise: true, starts: ["first", "rewrite"] });
  });

  it("sessions on the shared base URL are told apart by their keys", async () => {
    const a = open(["hello"]);
    const b = open(["world"]);
    const client = (key: string) => new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: key, maxRetries: 0 });
    const [fromA, fromB] = await Promise.all([
      client(a.handle.apiKey).responses.create({ model: "m", input: "hi" }),
      client(b.handle.apiKey).chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    ]);
    expect(fromA.output_text).toBe("hello");
    expect(fromB.choices[0]?.message.content).toBe("world");
    const anthropic = await fetch(`${gateway.origin}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": b.handle.apiKey },
      body: JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(anthropic.status).toBe(200);
    const stranger = await client("sk-nobody")
      .models.list()
      .catch((e: unknown) => e);
    expect((stranger as { status: number }).status).toBe(401);
    await Promise.all([a.handle.close(), b.handle.close()]);
    expect([a.session.record().episode.turns, b.session.record().episode.turns]).toEqual([1, 2]);
    expect(a.handle.faults).toEqual([]);
  });

  it("sessions sharing the run's validator compile an offered tool's schema once", async () => {
    const validator = new ToolCallValidator();
    for (const api of ["chat", "responses"]) {
      const { session, handle } = open([CALL], validator);
      const client = new OpenAI({ baseURL: handle.baseUrl, apiKey: handle.apiKey, maxRetries: 0 });
      if (api === "chat")
        await client.chat.completions.create({
          model: "m",
          messages: [{ role: "user", content: "hi" }],
          tools: [{ type: "function", function: STEP }],
        });
      else
        await client.responses.create({
          model: "m",
          input: "hi",
          tools: [{ type: "function", ...STEP, strict: false }],
        });
      await handle.close();
      expect(session.record().toolCalls[0]).toMatchObject({ name: "step", valid: true });
    }
    expect(validator.compiledSchemas).toBe(1);
  });
});
