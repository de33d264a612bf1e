// The language server's input framing: a malformed message (a bad Content-Length, a huge one, a
// body cut short, garbage between messages) is dropped with a logged reason, and the next valid
// message is answered, without restarting the server.
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StreamMessageReader, type Message, type RequestMessage } from "vscode-languageserver-protocol/node";
import { contentLength, FramingGuard } from "../../src/lsp/framing.js";
import { frame, probe, RawServer } from "./raw.js";

describe("contentLength (the header check)", () => {
  const max = 1000;
  it("reads the length of a valid header, whatever the case and the other fields", () => {
    expect(contentLength("Content-Length: 12", max)).toBe(12);
    expect(contentLength("content-type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH:7", max)).toBe(7);
  });
  it.each([
    ["Content-Length: lots", "not a number of bytes"],
    ["Content-Length: 1e12", "not a number of bytes"],
    ["Content-Length: -4", "not a number of bytes"],
    ["Content-Length: 0x10", "not a number of bytes"],
    ["Content-Length: 1001", "over the limit of 1000 bytes"],
    ["Content-Length: 1000000000000", "over the limit"],
    ["Content-Length: 4\r\nContent-Length: 4", "two Content-Length fields"],
    ["Content-Type: x", "no Content-Length"],
    ['{"jsonrpc":"2.0"}Content-Length: 4', "is not 'Name: value'"],
    ["garbage", "is not 'Name: value'"],
  ])("refuses %j: %s", (header, reason) => {
    expect(contentLength(header, max)).toEqual(expect.stringContaining(reason));
  });
});

/** Bytes through a FramingGuard into vscode-jsonrpc's own reader: what the connection would receive. */
function guarded(stallMs = 20) {
  const input = new PassThrough();
  const logged: string[] = [];
  const guard = new FramingGuard({ log: (r) => logged.push(r), stallMs, maxContentLength: 1 << 20 });
  const received: Message[] = [];
  const errors: Error[] = [];
  const reader = new StreamMessageReader(input.pipe(guard));
  reader.onError((e) => errors.push(e));
  reader.listen((m) => received.push(m));
  const ids = () => received.map((m) => (m as RequestMessage).id);
  return { input, guard, logged, received, errors, ids, dispose: () => reader.dispose() };
}

const settle = (ms = 250) => new Promise((r) => setTimeout(r, ms));

describe("FramingGuard in front of vscode-jsonrpc's reader", () => {
  it("passes valid messages through unchanged, split at any byte", async () => {
    const g = guarded();
    const bytes = Buffer.concat([probe(1), frame({ jsonrpc: "2.0", method: "x", params: { text: "Content-Length: 5\r\n\r\n✓" } }), probe(2)]);
    for (let i = 0; i < bytes.length; i += 7) g.input.write(bytes.subarray(i, i + 7));
    await settle();
    expect(g.ids()).toEqual([1, undefined, 2]);
    expect(g.logged).toEqual([]);
    expect(g.errors).toEqual([]);
    g.dispose();
  });

  it.each([
    ["a non-numeric Content-Length", "Content-Length: lots\r\n\r\n{}"],
    ["a Content-Length of 1e12", "Content-Length: 1e12\r\n\r\n{}"],
    ["a Content-Length of 10^12", "Content-Length: 1000000000000\r\n\r\n"],
    ["garbage between messages", "hello\r\nworld"],
    ["a header without Content-Length", "Content-Type: text/plain\r\n\r\n{}"],
    ["a body that is not JSON", "Content-Length: 5\r\n\r\n{{{{{"],
    ["a body cut short", 'Content-Length: 500\r\n\r\n{"jsonrpc":"2.0","id":'],
    ["a length that swallows the next message", "Content-Length: 90\r\n\r\n{}"],
    ["a header that never ends", "X".repeat(20_000)],
  ])("after %s, the next valid message still arrives (in one chunk, or with the bad bytes in their own)", async (_, bad) => {
    const g = guarded();
    g.input.write(Buffer.concat([probe(1), Buffer.from(bad, "latin1"), probe(2)]));
    g.input.write(Buffer.from(bad, "latin1"));
    g.input.write(probe(3));
    await settle();
    expect(g.ids()).toEqual([1, 2, 3]);
    expect(g.errors).toEqual([]);
    expect(g.logged.length).toBeGreaterThan(0);
    expect(g.logged[0]).toMatch(/^malformed message dropped \(.+\); skipped \d+ bytes/);
    g.dispose();
  });

  it("waits for a slow body as long as no other message starts inside it", async () => {
    const g = guarded(20);
    const bytes = probe(1);
    g.input.write(bytes.subarray(0, 30));
    await settle(100);
    g.input.write(bytes.subarray(30));
    await settle();
    expect(g.ids()).toEqual([1]);
    expect(g.logged).toEqual([]);
    g.dispose();
  });
});

describe("arl lsp --stdio behind the guard", () => {
  let server: RawServer;
  beforeAll(async () => {
    server = await RawServer.start();
  }, 90_000);
  afterAll(() => server.stop());

  it.each([
    [1, "a non-numeric Content-Length", "Content-Length: lots\r\n\r\n{}", "Content-Length is not a number of bytes"],
    [2, "a Content-Length of 1e12", "Content-Length: 1e12\r\n\r\n", "Content-Length is not a number of bytes"],
    [3, "a Content-Length of 10^12", "Content-Length: 1000000000000\r\n\r\n", "over the limit"],
    [4, "garbage between messages", "\x00\xff garbage \r\n\r\n", "is not 'Name: value'"],
  ])("answers the next request after %s, and logs why it dropped the bad one", async (id, _, bad, reason) => {
    const logged = server.stderr.length;
    server.write(Buffer.from(bad, "latin1"));
    server.write(probe(100 + id));
    const answer = await server.answer(100 + id);
    expect(answer).toMatchObject({ id: 100 + id, result: null });
    expect(server.stderr.slice(logged).join("")).toContain(reason);
  });

  it("answers the next request after a body cut short (once the request is seen inside it)", async () => {
    server.write('Content-Length: 5000\r\n\r\n{"jsonrpc":"2.0","id":');
    server.write(probe(120));
    expect(await server.answer(120)).toMatchObject({ id: 120, result: null });
    expect(server.stderr.join("")).toContain("stopped short");
  });
});
