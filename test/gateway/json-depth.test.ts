// Deeply nested JSON against the real gateway and a real model session over builtin:tiny: a tool
// schema (chat `parameters`, Responses `parameters`, Messages `input_schema`), Responses
// `metadata`, a tool call's `arguments` text or any other field nested past the limit is refused
// with a 400 that names the limit and the path, in the route's error shape, before the model half
// sees it; the session then serves the next request. A request the wire lets through but the
// model session cannot handle becomes that request's error, never the run's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Plan } from "../../src/plan/schema.js";
import { DEFAULT_TEMPLATE } from "../../src/episode/conversation.js";
import { GatewayError } from "../../src/inference/gateway/contract.js";
import { MAX_JSON_DEPTH, tooDeepAt } from "../../src/inference/gateway/json-depth.js";
import { ModelSession } from "../../src/inference/gateway/model-session.js";
import { startGateway } from "../../src/inference/gateway/server.js";
import { harnessVocabulary } from "../../src/episode/harness.js";
import type { TrainerPolicy } from "../../src/episode/policy.js";
import { EOS } from "../../src/trainer/embedded/tokenizer.js";
import { compilePlans, counterSpec } from "../helpers/plans.js";
import { tinyPolicy } from "../helpers/tiny-policy.js";

type Gateway = Awaited<ReturnType<typeof startGateway>>;

let plan: Plan;
let policy: TrainerPolicy;
let gateway: Gateway;
const logged: string[] = [];

beforeAll(async () => {
  plan = compilePlans(counterSpec(`harness { max_turns: 50 }`))[0]!;
  ({ policy } = await tinyPolicy(plan, harnessVocabulary(plan)));
  gateway = await startGateway({ log: (line) => logged.push(line) });
});
afterAll(async () => {
  await gateway.close();
});

const session = () =>
  new ModelSession({ policy, template: DEFAULT_TEMPLATE, stopIds: [EOS], plan, seed: (call) => call });

/** `{"type": "object", "properties": {"a": ...}}` nested `depth` objects deep (built as text: JSON.stringify would overflow first). */
function deepSchemaText(depth: number): string {
  return `${'{"type":"object","properties":{"a":'.repeat(depth)}{"type":"string"}${"}}".repeat(depth)}`;
}

const deepArrayText = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

async function post(url: string, key: string, body: string) {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "x-api-key": key, "content-type": "application/json" },
    body,
  });
  return {
    status: response.status,
    json: (await response.json()) as Record<string, unknown> & {
      error?: { message: string; param?: string | null; code?: string | null; type: string };
    },
  };
}

const USER = '[{"role":"user","content":"hello"}]';

/** Each API's route and a body whose tool schema is `schema` (JSON text). */
const withDeepTool = {
  chat: (schema: string) => ({
    path: "/chat/completions",
    body: `{"messages":${USER},"max_tokens":2,"tools":[{"type":"function","function":{"name":"f","parameters":${schema}}}]}`,
  }),
  responses: (schema: string) => ({
    path: "/responses",
    body: `{"input":"hello","max_output_tokens":2,"tools":[{"type":"function","name":"f","parameters":${schema}}]}`,
  }),
  messages: (schema: string) => ({
    path: "/messages",
    body: `{"model":"arl-policy","messages":${USER},"max_tokens":2,"tools":[{"name":"f","input_schema":${schema}}]}`,
  }),
};

describe("the JSON depth bound", () => {
  it("measures depth iteratively, skipping strings, and names the path of the first value too deep", () => {
    expect(tooDeepAt(deepArrayText(MAX_JSON_DEPTH))).toBeUndefined();
    expect(tooDeepAt(deepArrayText(MAX_JSON_DEPTH + 1))).toBe(`${"[0]".repeat(MAX_JSON_DEPTH)}`);
    expect(tooDeepAt(deepArrayText(1_000_000))).toBeDefined();
    expect(tooDeepAt(`{"a":"${"[".repeat(500)}\\"{{{"}`)).toBeUndefined();
    expect(tooDeepAt('{"x":[1,{"y z":{"k":[[[1]]]}}]}', 5)).toBe('x[1]["y z"].k[0]');
  });

  for (const api of ["chat", "responses", "messages"] as const) {
    it(`${api}: a tool schema nested 3,000 deep is a 400 naming the limit and the path; the session serves on`, async () => {
      const handle = gateway.open(session());
      const base = api === "messages" ? `${handle.anthropicBaseUrl}/v1` : handle.baseUrl;
      const deep = withDeepTool[api](deepSchemaText(3_000));
      const refused = await post(`${base}${deep.path}`, handle.apiKey, deep.body);
      expect(refused.status).toBe(400);
      expect(refused.json.error?.message ?? "").toContain(`${MAX_JSON_DEPTH} levels`);
      if (api === "messages")
        expect(refused.json).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
      else
        expect(refused.json.error).toMatchObject({
          code: "json_too_deep",
          param: expect.stringMatching(/^tools\[0\]\.(function\.)?parameters\.properties\.a/) as unknown,
        });
      // A real schema of a few levels is served, on the same session.
      const fine = withDeepTool[api](deepSchemaText(5));
      expect((await post(`${base}${fine.path}`, handle.apiKey, fine.body)).status).toBe(200);
      expect(logged.filter((l) => /failed/.test(l))).toEqual([]);
      await handle.close();
    });
  }

  it("responses: metadata nested 100,000 deep is a 400, not a 500", async () => {
    const handle = gateway.open(session());
    const refused = await post(
      `${handle.baseUrl}/responses`,
      handle.apiKey,
      `{"input":"hello","max_output_tokens":2,"metadata":{"k":${deepArrayText(100_000)}}}`,
    );
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({
      code: "json_too_deep",
      param: expect.stringMatching(/^metadata\.k\[0\]/) as unknown,
    });
    await handle.close();
  });

  it("every route: deep nesting in any field, the outcome and a tool call's arguments text included, is a 400", async () => {
    const handle = gateway.open(session());
    const deep = deepArrayText(5_000);
    const cases: [string, string][] = [
      ["/chat/completions", `{"messages":${USER},"stop":${deep}}`],
      ["/chat/completions", `{"messages":[{"role":"user","content":${deep}}]}`],
      ["/completions", `{"prompt":${deep},"max_tokens":2}`],
      ["/responses", `{"input":[{"role":"user","content":${deep}}]}`],
      ["/../outcome", `{"signals":${deep}}`],
    ];
    for (const [route, body] of cases) {
      const url = route === "/../outcome" ? handle.outcomeUrl : `${handle.baseUrl}${route}`;
      const refused = await post(url, handle.apiKey, body);
      expect(refused.status, `${route} ${body.slice(0, 60)}`).toBe(400);
      expect(refused.json.error?.code).toBe("json_too_deep");
    }
    const args = JSON.stringify(deep);
    const history = `[{"role":"user","content":"hello"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function","function":{"name":"f","arguments":${args}}}]},{"role":"tool","tool_call_id":"call_0","content":"ok"}]`;
    const refused = await post(`${handle.baseUrl}/chat/completions`, handle.apiKey, `{"messages":${history}}`);
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({
      code: "json_too_deep",
      param: "messages[1].tool_calls[0].function.arguments",
    });
    expect(
      (await post(`${handle.baseUrl}/chat/completions`, handle.apiKey, `{"messages":${USER},"max_tokens":2}`)).status,
    ).toBe(200);
    expect(logged.filter((l) => /failed/.test(l))).toEqual([]);
    await handle.close();
  });

  it("the model session answers a request it cannot handle with that request's error (a GatewayError), never an exception of the run", async () => {
    // Past the wire, directly: tools nested deeper than JSON.stringify can go.
    let parameters: unknown = { type: "string" };
    for (let i = 0; i < 20_000; i++) parameters = { type: "object", properties: { a: parameters } };
    const s = session();
    const failure = await s
      .chat({
        messages: [{ role: "user", content: "hello" }],
        tools: [{ type: "function", function: { name: "f", parameters } }],
        toolChoice: "auto",
        maxTokens: 2,
        stop: [],
        temperature: null,
        topP: null,
        seed: null,
        logprobs: false,
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as GatewayError).status).toBeGreaterThanOrEqual(400);
    // And the session serves the next request.
    const next = await s.chat({
      messages: [{ role: "user", content: "hello" }],
      tools: [],
      toolChoice: "auto",
      maxTokens: 2,
      stop: [],
      temperature: null,
      topP: null,
      seed: null,
      logprobs: false,
    });
    expect(next.ids.length).toBeGreaterThan(0);
  });
});
