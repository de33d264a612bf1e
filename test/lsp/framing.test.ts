// The language server's input framing: a malformed message (a bad Content-Length, a huge one, a
// body cut short, garbage between messages) is dropped with a logged reason, and the next valid
// message is answered, without restarting the server.
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  StreamMessageReader,
  type Message,
  type NotificationMessage,
  type RequestMessage,
} from "vscode-languageserver-protocol/node";
import { contentLength, FramingGuard, MESSAGE_TOO_LARGE } from "../../src/lsp/framing.js";
import { frame, probe, RawServer, request } from "./raw.js";

describe("contentLength (the header check)", () => {
  it("reads the length of a valid header, whatever the case and the other fields", () => {
    expect(contentLength("Content-Length: 12")).toBe(12);
    expect(contentLength("content-type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH:7")).toBe(7);
    expect(contentLength("Content-Length: 1000000000000")).toBe(1e12);
  });
  it.each([
    ["Content-Length: lots", "not a number of bytes"],
    ["Content-Length: 1e12", "not a number of bytes"],
    ["Content-Length: -4", "not a number of bytes"],
    ["Content-Length: 0x10", "not a number of bytes"],
    ["Content-Length: 4\r\nContent-Length: 4", "two Content-Length fields"],
    ["Content-Type: x", "no Content-Length"],
    ['{"jsonrpc":"2.0"}Content-Length: 4', "is not 'Name: value'"],
    ["garbage", "is not 'Name: value'"],
  ])("refuses %j: %s", (header, reason) => {
    expect(contentLength(header)).toEqual(expect.stringContaining(reason));
  });
});

/** Bytes through a FramingGuard into vscode-jsonrpc's own reader: what the connection would receive. */
function guarded(stallMs = 20, maxContentLength = 1 << 20) {
  const input = new PassThrough();
  const logged: string[] = [];
  const guard = new FramingGuard({ log: (r) => logged.push(r), stallMs, maxContentLength });
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
    const bytes = Buffer.concat([
      probe(1),
      frame({ jsonrpc: "2.0", method: "x", params: { text: "Content-Length: 5\r\n\r\n✓" } }),
      probe(2),
    ]);
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
  ])(
    "after %s, the next valid message still arrives (in one chunk, or with the bad bytes in their own)",
    async (_, bad) => {
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
    },
  );

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

/** A notification `method` whose params hold `bytes` characters of text. */
const sized = (method: string, bytes: number, id?: number) =>
  frame({ jsonrpc: "2.0", ...(id !== undefined ? { id } : {}), method, params: { text: "é".repeat(bytes / 2) } });

describe("FramingGuard: cost and size limit", () => {
  it("copies a body that arrives in 1,000 chunks once when it is complete, not once per chunk", () => {
    const message = sized("x/big", 1 << 20);
    const guard = new FramingGuard({ log: () => {}, maxContentLength: 4 << 20 });
    const out: Buffer[] = [];
    guard.on("data", (b: Buffer) => out.push(b));
    const concat = vi.spyOn(Buffer, "concat");
    try {
      for (let at = 0; at < message.length; at += 1024) guard.write(message.subarray(at, at + 1024));
      const copied = concat.mock.results.reduce((sum, r) => sum + (r.value as Buffer).length, 0);
      // Joining the pending bytes with each chunk copied about 1,000 x 0.5 MB = 500 MB here.
      expect(copied, "bytes copied by Buffer.concat").toBeLessThanOrEqual(2 * message.length);
    } finally {
      concat.mockRestore();
    }
    expect(Buffer.concat(out).equals(message)).toBe(true);
  });

  it("reads past a message over the limit and passes on, in its place, the replacement the server answers", async () => {
    const g = guarded(20, 10_000);
    const bytes = Buffer.concat([
      probe(1),
      sized("textDocument/hover", 50_000, 7),
      probe(2),
      sized("textDocument/didOpen", 30_000),
      probe(3),
    ]);
    for (let at = 0; at < bytes.length; at += 999) g.input.write(bytes.subarray(at, at + 999));
    await settle();
    expect(g.errors).toEqual([]);
    expect(g.received.map((m) => [(m as RequestMessage).id, (m as RequestMessage).method])).toEqual([
      [1, "textDocument/hover"],
      [7, MESSAGE_TOO_LARGE],
      [2, "textDocument/hover"],
      [undefined, MESSAGE_TOO_LARGE],
      [3, "textDocument/hover"],
    ]);
    const [big, note] = [g.received[1] as RequestMessage, g.received[3] as NotificationMessage];
    expect(big.params).toEqual({
      method: "textDocument/hover",
      length: sized("textDocument/hover", 50_000, 7).length - "Content-Length: 50060\r\n\r\n".length,
      limit: 10_000,
    });
    expect(note.params).toMatchObject({ method: "textDocument/didOpen", limit: 10_000 });
    expect(g.logged).toEqual([
      expect.stringMatching(/^a message of \d+ bytes, over the limit of 10000 bytes, was read past and refused$/),
      expect.stringContaining("was read past"),
    ]);
    expect(g.guard.dropped).toBe(2);
    g.dispose();
  });

  it.each([
    ["inside a string", '{"jsonrpc":"2.0","id":9,"method":"textDocument/hover","params":{"text":"abc'],
    ["between tokens", '{"jsonrpc":"2.0","id":9,"method":"textDocument/hover","params":{"a":1,'],
    ["after the value", '{"jsonrpc":"2.0","id":9,"method":"textDocument/hover","params":{}}  '],
  ])(
    "takes a huge length whose body ends early (%s) as a lie, at once: the next message arrives without a stall",
    async (_, body) => {
      const g = guarded(60_000, 10_000);
      g.input.write(Buffer.concat([Buffer.from(`Content-Length: 123456789\r\n\r\n${body}`, "latin1"), probe(1)]));
      g.input.write(probe(2));
      await settle();
      expect(g.ids()).toEqual([9, 1, 2]);
      expect(g.logged).toEqual([
        expect.stringMatching(
          /^malformed message dropped \(a message of 123456789 bytes, over the limit of 10000 bytes, ended early: .+\); skipped \d+ bytes/,
        ),
      ]);
      g.dispose();
    },
  );
});

describe("arl lsp --stdio with a 100 kB message limit (ARL_LSP_MAX_MESSAGE_BYTES)", () => {
  let server: RawServer;
  beforeAll(async () => {
    server = await RawServer.start({ ARL_LSP_MAX_MESSAGE_BYTES: "100000" });
  }, 90_000);
  afterAll(() => server.stop());

  it("answers a request over the limit with an error, shows a refused notification, and goes on serving", async () => {
    server.write(sized("textDocument/hover", 300_000, 41));
    const refused = await server.answer(41, 10_000);
    expect(refused?.error).toEqual({
      code: -32600,
      message: expect.stringMatching(
        /^the language server refused a 'textDocument\/hover' message of \d+ bytes: over its limit of 100000 bytes \(ARL_LSP_MAX_MESSAGE_BYTES\)$/,
      ),
    });
    server.write(sized("textDocument/didOpen", 300_000));
    server.write(probe(42));
    expect(await server.answer(42)).toMatchObject({ id: 42, result: null });
    expect(server.notifications.filter((n) => n.method === "window/showMessage").map((n) => n.params)).toEqual([
      { type: 1, message: expect.stringContaining("refused a 'textDocument/didOpen' message of") },
    ]);
    server.write(request(43, "shutdown"));
    expect(await server.answer(43)).toMatchObject({ id: 43, result: null });
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
