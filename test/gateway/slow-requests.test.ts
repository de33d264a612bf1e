// Slow clients against the real gateway over a real socket: a client that sends its body a byte
// at a time, or its headers a byte at a time, is answered 408 and its connection closed once the
// request limit (or the headers limit) has passed, not later; shorter limits than the defaults
// (120 s, 30 s) keep the test short. The answer itself may take longer: only the request counts.
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway } from "../../src/inference/gateway/server.js";
import { ScriptedModel } from "./scripted-model.js";

type Gateway = Awaited<ReturnType<typeof startGateway>>;

const REQUEST_MS = 1_500;
const HEADERS_MS = 1_000;
let gateway: Gateway;
beforeAll(async () => {
  gateway = await startGateway({ log: () => undefined, requestTimeoutMs: REQUEST_MS, headersTimeoutMs: HEADERS_MS });
});
afterAll(async () => {
  await gateway.close();
});

/** Opens a connection, then writes `head`, then one byte of `trickle` every `everyMs` until the server closes; resolves with what it sent back and when. */
function trickle(
  head: string,
  trickle: string,
  everyMs: number,
  giveUpMs: number,
): Promise<{ closedAfterMs: number | null; data: string }> {
  const { hostname, port } = new URL(gateway.origin);
  return new Promise((resolve) => {
    const socket: Socket = connect({ host: hostname, port: Number(port) });
    const started = Date.now();
    let data = "";
    let at = 0;
    const timer = setInterval(() => {
      if (at < trickle.length && !socket.destroyed) socket.write(trickle[at++]!);
    }, everyMs);
    const done = (closed: boolean) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ closedAfterMs: closed ? Date.now() - started : null, data });
    };
    const giveUp = setTimeout(() => done(false), giveUpMs);
    socket.on("data", (part: Buffer) => (data += part.toString("latin1")));
    socket.on("close", () => done(true));
    socket.on("error", () => undefined);
    socket.write(head);
  });
}

describe("slow requests", () => {
  it("a body sent a byte at a time is cut with a 408 once the request limit passes", async () => {
    const handle = gateway.open(new ScriptedModel());
    const body = JSON.stringify({ messages: [{ role: "user", content: "x".repeat(200) }] });
    const head = `POST /s/${handle.id}/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${handle.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const slow = await trickle(head, body, 50, REQUEST_MS + 8_000);
    expect(slow.closedAfterMs, "the connection was still open").not.toBeNull();
    expect(slow.closedAfterMs!).toBeGreaterThanOrEqual(REQUEST_MS - 100);
    // The limit holds: the connection goes within the limit and one check of the server's (1 s).
    expect(slow.closedAfterMs!).toBeLessThan(REQUEST_MS + 1_500);
    expect(slow.data).toMatch(/^HTTP\/1\.1 408 /);
  }, 20_000);

  it("headers sent a byte at a time are cut once the headers limit passes", async () => {
    const head = "GET /v1/models HTTP/1.1\r\n";
    const slow = await trickle(head, `X-Slow: ${"a".repeat(500)}\r\n\r\n`, 50, HEADERS_MS + 8_000);
    expect(slow.closedAfterMs, "the connection was still open").not.toBeNull();
    expect(slow.closedAfterMs!).toBeLessThan(HEADERS_MS + 1_500);
    expect(slow.data).toMatch(/^HTTP\/1\.1 408 /);
  }, 20_000);

  it("a request sent in time is answered", async () => {
    const handle = gateway.open(new ScriptedModel());
    const response = await fetch(`${handle.baseUrl}/models`, { headers: { authorization: `Bearer ${handle.apiKey}` } });
    expect(response.status).toBe(200);
  });
});
