// The gateway's HTTP edges with raw requests: body limits, malformed JSON, unknown sessions and
// routes, the outcome POST, failures of the model half, and clients that go away mid-call.
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError, type ChatResult } from "../../src/inference/gateway/contract.js";
import { startGateway } from "../../src/inference/gateway/server.js";
import { keepAliveExchange, rawExchange } from "../helpers/raw-http.js";
import { plainAnswer, ScriptedModel } from "./scripted-model.js";

type Gateway = Awaited<ReturnType<typeof startGateway>>;

const logged: string[] = [];
let gateway: Gateway;
beforeAll(async () => {
  gateway = await startGateway({ maxBodyBytes: 4096, log: (line) => logged.push(line) });
});
afterAll(async () => {
  await gateway.close();
});

const chatBody = (content = "hi") => JSON.stringify({ model: "arl-policy", messages: [{ role: "user", content }] });

async function post(url: string, key: string, body: string) {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  });
  return {
    status: response.status,
    json: (await response.json()) as {
      error?: { message: string; type: string; param: string | null; code: string | null };
    } & Record<string, unknown>,
  };
}

/** A raw request whose body is sent in chunks without a length (so only the running count can stop it). */
function postChunked(url: string, key: string, chunks: readonly string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", headers: { authorization: `Bearer ${key}`, "transfer-encoding": "chunked" } },
      (res) => {
        let body = "";
        res.on("data", (part: Buffer) => (body += part.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe("the gateway's HTTP edges", () => {
  it("refuses oversized and malformed bodies, unknown sessions and routes with OpenAI error objects", async () => {
    const handle = gateway.open(new ScriptedModel());
    const chat = `${handle.baseUrl}/chat/completions`;
    const before = { ...gateway.stats };

    const big = await post(chat, handle.apiKey, chatBody("x".repeat(5000)));
    expect(big.status).toBe(413);
    expect(big.json.error?.message).toMatch(/larger than 4096 bytes/);
    const streamed = await postChunked(
      chat,
      handle.apiKey,
      Array.from({ length: 5 }, () => "x".repeat(1000)),
    );
    expect(streamed.status).toBe(413);

    const malformed = await post(chat, handle.apiKey, '{"messages": [');
    expect(malformed.status).toBe(400);
    expect(malformed.json.error).toMatchObject({ type: "invalid_request_error", code: "invalid_json" });

    const image = await post(
      chat,
      handle.apiKey,
      JSON.stringify({
        model: "m",
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:," } }] }],
      }),
    );
    expect(image.status).toBe(400);
    expect(image.json.error?.param).toBe("messages[0].content[0].type");
    const unknownField = await post(
      chat,
      handle.apiKey,
      JSON.stringify({ messages: [{ role: "user", content: "hi" }], top_k: 5 }),
    );
    expect(unknownField.json.error).toMatchObject({ param: "top_k", code: "unsupported_field" });

    const stranger = await post(chat.replace(handle.id, "0".repeat(32)), handle.apiKey, chatBody());
    expect(stranger.status).toBe(404);
    expect(stranger.json.error?.code).toBe("unknown_session");
    const route = await fetch(`${handle.baseUrl}/embeddings`, {
      method: "POST",
      headers: { authorization: `Bearer ${handle.apiKey}` },
      body: "{}",
    });
    expect(route.status).toBe(404);
    expect(((await route.json()) as { error: { type: string } }).error.type).toBe("not_found_error");

    const missingKey = await fetch(`${handle.baseUrl}/models`);
    expect(missingKey.status).toBe(401);
    expect(handle.faults).toEqual([
      { kind: "wrong_key", message: expect.stringMatching(/missing API key/) as unknown },
    ]);

    expect(gateway.stats.requests - before.requests).toBe(8);
    expect(gateway.stats.errors - before.errors).toBe(8);
    expect(gateway.stats.unauthorized - before.unauthorized).toBe(1);
    // Every refusal left the session usable.
    expect((await post(chat, handle.apiKey, chatBody())).status).toBe(200);
  });

  it("answers a request target that is no URL with a 400 and keeps serving (it used to end the process)", async () => {
    const handle = gateway.open(new ScriptedModel());
    for (const target of ["http://[", "http://[::1", "http://x:99999/", "//[/v1"]) {
      const exchange = await rawExchange(gateway.origin, `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`, {
        halfClose: false,
      });
      expect(exchange.statuses, target).toEqual([400]);
      const body = exchange.data.toString("utf8").split("\r\n\r\n")[1] ?? "";
      expect(JSON.parse(body), target).toMatchObject({ error: { type: "invalid_request_error", code: "invalid_url" } });
    }
    expect(logged.filter((line) => line.includes("failed"))).toEqual([]);
    expect((await post(`${handle.baseUrl}/chat/completions`, handle.apiKey, chatBody())).status).toBe(200);
  });

  it("says Connection: close on a 413 and closes the connection, so a kept-alive client does not write into a dropped socket", async () => {
    const handle = gateway.open(new ScriptedModel());
    const url = new URL(`${handle.baseUrl}/chat/completions`);
    const big = `POST ${url.pathname} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${handle.apiKey}\r\nContent-Length: 5000\r\nConnection: keep-alive\r\n\r\n`;
    // The answer says close and the server closes: the client sends nothing more on it.
    const answers = await keepAliveExchange(gateway.origin, [
      big,
      `GET /s/${handle.id}/v1/models HTTP/1.1\r\nHost: x\r\n\r\n`,
    ]);
    expect(answers).toEqual([{ status: 413, headers: expect.stringMatching(/\r\nconnection: close/i) as unknown }]);
  });

  it("keeps the posted outcome, refusing one that is not an object", async () => {
    const handle = gateway.open(new ScriptedModel());
    expect((await post(handle.outcomeUrl, handle.apiKey, "[1]")).status).toBe(400);
    const accepted = await post(handle.outcomeUrl, handle.apiKey, JSON.stringify({ signals: { resolved: true } }));
    expect(accepted).toEqual({ status: 200, json: {} });
    expect(handle.postedOutcome).toEqual({ signals: { resolved: true } });
    await handle.close();
    expect((await post(handle.outcomeUrl, handle.apiKey, "{}")).status).toBe(410);
    expect(handle.postedOutcome).toEqual({ signals: { resolved: true } });
  });

  it("answers a model's GatewayError with its object and any other failure with a logged 500, then keeps serving", async () => {
    let calls = 0;
    const handle = gateway.open(
      new ScriptedModel(() => {
        calls++;
        if (calls === 1)
          throw new GatewayError(
            400,
            "the prompt is longer than the model's context",
            "invalid_request_error",
            "messages",
            "context_length_exceeded",
          );
        if (calls === 2) throw new TypeError("the model half broke");
        return plainAnswer(["ok"]);
      }),
    );
    const chat = `${handle.baseUrl}/chat/completions`;
    const refused = await post(chat, handle.apiKey, chatBody());
    expect(refused).toEqual({
      status: 400,
      json: {
        error: {
          message: "the prompt is longer than the model's context",
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded",
        },
      },
    });
    const failed = await post(chat, handle.apiKey, chatBody());
    expect(failed.status).toBe(500);
    expect(failed.json.error?.type).toBe("server_error");
    expect(failed.json.error?.message).not.toMatch(/broke/);
    expect(logged.some((line) => line.includes("TypeError: the model half broke"))).toBe(true);
    const next = await post(chat, handle.apiKey, chatBody());
    expect(next.status).toBe(200);
  });

  it("streams events whose pieces and log-probs cover the answer, ids first and last", async () => {
    // The text was cut before a stop string inside the last word's token: "re!" is not all content.
    const cut: ChatResult = { ...plainAnswer(["Hi", " the", "re!"]), content: "Hi there" };
    const handle = gateway.open(new ScriptedModel(() => cut));
    const response = await fetch(`${handle.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${handle.apiKey}` },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], stream: true, logprobs: true }),
    });
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = (await response.text()).split("\n\n").filter((e) => e !== "");
    expect(events.every((e) => e.startsWith("data: "))).toBe(true);
    expect(events.at(-1)).toBe("data: [DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice("data: ".length)));
    expect(chunks[0].prompt_token_ids).toEqual([100, 101, 102, 103, 104]);
    expect(chunks[0].choices[0].delta).toEqual({ role: "assistant", content: "" });
    const content = chunks
      .slice(1, -1)
      .map((c) => [c.choices[0].delta.content, c.choices[0].logprobs.content.map((t: { token: string }) => t.token)]);
    expect(content).toEqual([
      ["Hi", ["Hi"]],
      [" the", [" the"]],
      ["re", ["re!", "<|im_end|>"]],
    ]);
    const lastChunk = chunks.at(-1);
    expect(lastChunk.choices[0]).toMatchObject({
      delta: {},
      finish_reason: "stop",
      token_ids: [10, 11, 12, 13],
      logprobs: { content: [] },
    });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it("keeps 32 concurrent sessions apart", async () => {
    const handles = Array.from({ length: 32 }, (_, i) =>
      gateway.open(
        new ScriptedModel((request) => plainAnswer([`session ${i}: ${request.messages.at(-1)?.content ?? ""}`])),
      ),
    );
    const answers = await Promise.all(
      handles.flatMap((handle, i) =>
        [0, 1, 2].map(async (turn) => {
          const { json } = await post(`${handle.baseUrl}/chat/completions`, handle.apiKey, chatBody(`turn ${turn}`));
          return [i, turn, (json.choices as { message: { content: string } }[])[0]?.message.content];
        }),
      ),
    );
    expect(answers.every(([i, turn, content]) => content === `session ${String(i)}: turn ${String(turn)}`)).toBe(true);
    // A key is good for its own session only.
    const [first, second] = handles;
    expect((await post(`${first?.baseUrl ?? ""}/chat/completions`, second?.apiKey ?? "", chatBody())).status).toBe(401);
    await Promise.all(handles.map((handle) => handle.close()));
  });

  it("finishes a call whose client went away, and closing the session waits for it", async () => {
    let release: (result: ChatResult) => void = () => undefined;
    let started: () => void = () => undefined;
    const startedCall = new Promise<void>((resolve) => (started = resolve));
    const model = new ScriptedModel(
      () =>
        new Promise<ChatResult>((resolve) => {
          release = resolve;
          started();
        }),
    );
    const handle = gateway.open(model);
    const abort = new AbortController();
    const call = fetch(`${handle.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${handle.apiKey}` },
      body: chatBody(),
      signal: abort.signal,
    });
    await startedCall;
    abort.abort();
    await expect(call).rejects.toThrow();

    let closed = false;
    const closing = handle.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false);
    release(plainAnswer(["late"]));
    await closing;
    expect(model.chats).toHaveLength(1);

    // The gateway still serves other sessions.
    const other = gateway.open(new ScriptedModel());
    expect((await post(`${other.baseUrl}/chat/completions`, other.apiKey, chatBody())).status).toBe(200);
  });
});
