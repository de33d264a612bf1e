// One call to an inference server (src/inference/engine/http.ts) against a real HTTP server on
// loopback: JSON answers, plain-text answers for the routes that answer text (vLLM's
// /v1/load_lora_adapter: `Success: LoRA adapter '...' added successfully.`), and which failures
// another attempt may cure.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callServer, EngineCallError } from "../../../src/inference/engine/http.js";
import { vllmWire } from "../../../src/inference/engine/vllm-wire.js";

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/v1/load_lora_adapter") {
      // What vLLM's route answers on success: a text body, not JSON.
      res
        .writeHead(200, { "content-type": "text/plain; charset=utf-8" })
        .end("Success: LoRA adapter 'arl-policy-v1' added successfully.");
    } else if (req.url === "/json") res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    else if (req.url === "/refused")
      res.writeHead(400, { "content-type": "application/json" }).end('{"error":{"message":"bad"}}');
    else res.writeHead(503).end("busy");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("callServer", () => {
  it("reads a LoRA load's text answer as the weight sync's call asks, never as a failure", async () => {
    const [load] = vllmWire.weightSync("/run/engine-weights/v1", 1, { lora: true });
    expect(await callServer(base, load!, 5000)).toBe("Success: LoRA adapter 'arl-policy-v1' added successfully.");
  });

  it("reads JSON answers, and a call that expects JSON and gets text is a retryable protocol fault", async () => {
    expect(await callServer(base, { method: "GET", path: "/json" }, 5000)).toEqual({ ok: true });
    const error = await callServer(base, { method: "POST", path: "/v1/load_lora_adapter" }, 5000).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EngineCallError);
    expect((error as EngineCallError).message).toMatch(/answered what is not JSON: Success: LoRA adapter/);
  });

  it("a 4xx is not retried, a 5xx is", async () => {
    const refused = (await callServer(base, { method: "POST", path: "/refused" }, 5000).catch(
      (e: unknown) => e,
    )) as EngineCallError;
    expect([refused.retryable, refused.message]).toEqual([
      false,
      'POST /refused answered 400: {"error":{"message":"bad"}}',
    ]);
    const busy = (await callServer(base, { method: "GET", path: "/other" }, 5000).catch(
      (e: unknown) => e,
    )) as EngineCallError;
    expect(busy.retryable).toBe(true);
  });
});
