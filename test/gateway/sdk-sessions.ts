// What the SDK suites share: a gateway for the file, and per test a session whose scripted model
// plays a weather agent (calls the tool when tools are offered, answers once its result is back),
// with the official OpenAI Node client pointed at it.
import OpenAI from "openai";
import { afterAll, beforeAll } from "vitest";
import type { ChatRequest } from "../../src/inference/gateway/contract.js";
import { startGateway } from "../../src/inference/gateway/server.js";
import { plainAnswer, ScriptedModel, toolCallAnswer } from "./scripted-model.js";

export function weatherAgent(request: ChatRequest) {
  if (request.messages.at(-1)?.role === "tool") return plainAnswer(["It", " is", " sunny", "."]);
  if (request.tools.length > 0 && request.toolChoice === "auto")
    return toolCallAnswer({ id: "call_0", name: "get_weather", arguments: '{"city":"Paris"}' });
  return plainAnswer(["Hello", ",", " world"]);
}

/** Starts a gateway before the file's tests and closes it after; `session()` opens one per test. */
export function sdkSessions() {
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  beforeAll(async () => {
    gateway = await startGateway({ log: () => undefined });
  });
  afterAll(async () => {
    await gateway.close();
  });
  return {
    session() {
      const model = new ScriptedModel(weatherAgent);
      const handle = gateway.open(model);
      const client = new OpenAI({ baseURL: handle.baseUrl, apiKey: handle.apiKey, maxRetries: 0 });
      return { model, handle, client };
    },
  };
}
