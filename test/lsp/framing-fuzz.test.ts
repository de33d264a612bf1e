// A seeded, bounded fuzzer of the JSON-RPC framing. Valid messages (any JSON, header variants,
// some over the size limit) cut into random chunks must decode exactly as sent, each one over the
// limit replaced by its MESSAGE_TOO_LARGE stand-in. Bad headers, huge or lying lengths, partial
// bodies, garbage between messages and bodies that are JSON but not JSON-RPC, cut into random
// chunks: after each, a valid request must still be answered (the server never wedges).
// ARL_FUZZ_LSP_ROUNDS=3000 runs that many rounds of valid messages instead of the CI's 60.
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StreamMessageReader, type Message, type RequestMessage } from "vscode-languageserver-protocol/node";
import { mulberry32 as rng } from "../../src/contracts/random.js";
import { FramingGuard, MESSAGE_TOO_LARGE } from "../../src/lsp/framing.js";
import { frame, probe, RawServer } from "./raw.js";

/** The size limit of the guards and the server under test: small, so that crossing it is cheap. */
const LIMIT = 1 << 17;
const validRounds = Number(process.env.ARL_FUZZ_LSP_ROUNDS ?? "60") || 60;

type Random = () => number;
const pick = <T>(next: Random, list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
const bytes = (next: Random, n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(next() * 256)));

/** One malformed piece of input, of a random kind; `kind` names it for the failure message. */
function malformed(next: Random): { kind: string; data: Buffer } {
  const valid = probe(-1);
  const kinds: Record<string, () => Buffer | string> = {
    "non-numeric length": () =>
      `Content-Length: ${pick(next, ["lots", "1e12", "-1", "0x20", "", "12abc", "NaN", "١٢"])}\r\n\r\n{}`,
    "huge length": () =>
      `Content-Length: ${pick(next, ["1000000000000", "99999999999999999999", String(2 ** 53), "68719476736"])}\r\n\r\n`,
    "no length": () => `Content-Type: application/vscode-jsonrpc\r\n\r\n{}`,
    "two lengths": () => `Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
    "partial body": () => valid.subarray(0, valid.indexOf("\r\n\r\n") + 4 + Math.floor(next() * 20)),
    "length too long": () => `Content-Length: ${40 + Math.floor(next() * 400)}\r\n\r\n{"jsonrpc":"2.0"}`,
    "length too short": () => `Content-Length: ${1 + Math.floor(next() * 10)}\r\n\r\n{"jsonrpc":"2.0","method":"x"}`,
    "random bytes": () => bytes(next, 1 + Math.floor(next() * 300)),
    "garbage text": () =>
      pick(next, ["hello", "\r\n", "\r\n\r\n", "Content-Length", "Content-Length:", ":::", "{}\r\n\r\n"]),
    "long header": () => `X-Junk: ${"y".repeat(9000 + Math.floor(next() * 3000))}`,
    "non-JSON body": () => {
      const body = bytes(next, 1 + Math.floor(next() * 50));
      return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]);
    },
    "JSON, not JSON-RPC": () =>
      frame(
        pick(next, [
          [],
          [1, 2],
          { jsonrpc: "2.0" },
          { id: -2 },
          { jsonrpc: "2.0", id: -3, method: 7 },
          { jsonrpc: "2.0", id: -4, method: "textDocument/hover", params: "x" },
        ]),
      ),
    "request over the limit": () =>
      frame({
        jsonrpc: "2.0",
        id: -5,
        method: "textDocument/hover",
        params: { text: "x".repeat(LIMIT + Math.floor(next() * 3 * LIMIT)) },
      }),
    "notification over the limit": () =>
      frame({
        jsonrpc: "2.0",
        method: "textDocument/didOpen",
        params: { text: "é".repeat(LIMIT + Math.floor(next() * LIMIT)) },
      }),
    "deep JSON": () => {
      const depth = 1000 + Math.floor(next() * 50_000);
      return `Content-Length: ${2 * depth}\r\n\r\n${"[".repeat(depth)}${"]".repeat(depth)}`;
    },
  };
  const kind = pick(next, Object.keys(kinds));
  const data = kinds[kind]!();
  return { kind, data: typeof data === "string" ? Buffer.from(data, "latin1") : data };
}

/** `data` cut at random points. */
function chunks(next: Random, data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < data.length;) {
    const n = 1 + Math.floor(next() * Math.min(data.length - at, 200));
    out.push(data.subarray(at, at + n));
    at += n;
  }
  return out;
}

const TEXTS = [
  "",
  "a",
  "é",
  "✓",
  "😀",
  "\r\n",
  "\r\n\r\n",
  "Content-Length: 5\r\n\r\n",
  '"',
  "\\",
  "}",
  "{",
  "\u0000",
  "content-length:",
];

/** A random JSON value of about `budget` bytes. */
function value(next: Random, budget: number, depth = 0): unknown {
  const kind = depth > 6 || budget < 8 ? Math.floor(next() * 4) : Math.floor(next() * 6);
  if (kind === 0) return Math.floor(next() * 2 ** 40) * (next() < 0.5 ? 1 : -1) + (next() < 0.3 ? 0.5 : 0);
  if (kind === 1) return pick(next, [true, false, null]);
  if (kind === 2 || kind === 3) {
    const parts: string[] = [];
    for (let n = 0; n < Math.max(1, budget); n += 4)
      parts.push(next() < 0.7 ? String.fromCharCode(97 + Math.floor(next() * 26)) : pick(next, TEXTS));
    return parts.join("");
  }
  const n = 1 + Math.floor(next() * 5);
  const items = Array.from({ length: n }, () => value(next, budget / n, depth + 1));
  return kind === 4 ? items : Object.fromEntries(items.map((v, i) => [`k${i}${pick(next, TEXTS)}`, v]));
}

/** One valid message (a request, a notification or a response), mostly small, now and then over LIMIT. */
function validMessage(next: Random, id: number): object {
  const budget =
    next() < 0.1
      ? LIMIT + Math.floor(next() * LIMIT)
      : next() < 0.3
        ? Math.floor(next() * 20_000)
        : Math.floor(next() * 300);
  const kind = pick(next, ["request", "notification", "response"]);
  if (kind === "response") return { jsonrpc: "2.0", id, result: value(next, budget) };
  return {
    jsonrpc: "2.0",
    ...(kind === "request" ? { id: next() < 0.5 ? id : `s${id}` } : {}),
    method: `m/${id}`,
    params: { v: value(next, budget) },
  };
}

/** A message's bytes with one of the header forms the protocol allows. */
function framed(next: Random, message: object): Buffer {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  const header = pick(next, [
    `Content-Length: ${body.length}\r\n\r\n`,
    `content-length:${body.length}\r\n\r\n`,
    `Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: ${body.length}\r\n\r\n`,
    `CONTENT-LENGTH: \t${body.length}\r\nContent-Type: x\r\n\r\n`,
  ]);
  return Buffer.concat([Buffer.from(header, "latin1"), body]);
}

/** What the reader must receive for `message`: itself, its stand-in when over LIMIT, or nothing (a response over it). */
function expected(message: Record<string, unknown>, bytes: number): object | undefined {
  if (bytes <= LIMIT) return message;
  if (!("method" in message)) return undefined;
  return {
    jsonrpc: "2.0",
    ...("id" in message ? { id: message.id } : {}),
    method: MESSAGE_TOO_LARGE,
    params: { method: message.method, length: bytes, limit: LIMIT },
  };
}

describe("framing fuzzer: valid messages in random chunks", () => {
  it(`decode exactly as sent over ${validRounds} seeded rounds, each message over the limit as its stand-in`, async () => {
    const next = rng(31);
    const input = new PassThrough();
    const logged: string[] = [];
    const guard = new FramingGuard({ log: (r) => logged.push(r), stallMs: 60_000, maxContentLength: LIMIT });
    const reader = new StreamMessageReader(input.pipe(guard));
    const errors: Error[] = [];
    const received: Message[] = [];
    reader.onError((e) => errors.push(e));
    reader.listen((m) => received.push(m));
    let messages = 0;
    let refused = 0;
    for (let round = 1; round <= validRounds; round++) {
      const sent = Array.from(
        { length: 1 + Math.floor(next() * 8) },
        () => validMessage(next, ++messages) as Record<string, unknown>,
      );
      const bytes = sent.map((m) => framed(next, m));
      const want = sent.flatMap((m) => expected(m, Buffer.byteLength(JSON.stringify(m))) ?? []);
      refused += sent.filter((m) => Buffer.byteLength(JSON.stringify(m)) > LIMIT).length;
      // Chunks of 1 byte to 64 KiB: from a slow pipe to a whole burst at once.
      const all = Buffer.concat(bytes);
      for (let at = 0; at < all.length;) {
        const n = 1 + Math.floor(next() ** 3 * Math.min(all.length - at, 65_536));
        input.write(all.subarray(at, at + n));
        at += n;
      }
      for (let wait = 0; wait < 200 && received.length < want.length; wait++)
        await new Promise((r) => setTimeout(r, 5));
      expect(received.splice(0), `round ${round}`).toEqual(want);
    }
    expect(errors).toEqual([]);
    expect(guard.dropped).toBe(refused);
    expect(logged.filter((l) => !l.endsWith("was read past and refused"))).toEqual([]);
    reader.dispose();
  }, 600_000);
});

describe("framing fuzzer: the guard in front of vscode-jsonrpc's reader", () => {
  it("delivers every valid request after 150 seeded rounds of malformed input, with no reader error", async () => {
    const next = rng(13);
    const input = new PassThrough();
    const guard = new FramingGuard({ log: () => {}, stallMs: 5, maxContentLength: LIMIT });
    const reader = new StreamMessageReader(input.pipe(guard));
    const errors: Error[] = [];
    const delivered = new Set<number>();
    reader.onError((e) => errors.push(e));
    reader.listen((m) => {
      const id = (m as RequestMessage).id;
      if (typeof id === "number" && id > 0) delivered.add(id);
    });
    for (let round = 1; round <= 150; round++) {
      const bad = malformed(next);
      for (const c of chunks(next, Buffer.concat([bad.data, probe(round)]))) input.write(c);
      // A partial body is resynchronised after the guard's stall time: give it a few.
      for (let wait = 0; wait < 100 && !delivered.has(round); wait++) await new Promise((r) => setTimeout(r, 5));
      expect(delivered.has(round), `round ${round}: the request after '${bad.kind}' never arrived`).toBe(true);
    }
    expect(errors).toEqual([]);
    expect(guard.dropped).toBeGreaterThan(50);
    reader.dispose();
  }, 120_000);
});

describe("framing fuzzer: arl lsp --stdio", () => {
  let server: RawServer;
  beforeAll(async () => {
    server = await RawServer.start({ ARL_LSP_MAX_MESSAGE_BYTES: String(LIMIT) });
  }, 90_000);
  afterAll(() => server.stop());

  it("answers a valid request after each of 25 seeded rounds of malformed input", async () => {
    const next = rng(29);
    for (let round = 1; round <= 25; round++) {
      const bad = malformed(next);
      for (const c of chunks(next, Buffer.concat([bad.data, probe(1000 + round)]))) server.write(c);
      const answer = await server.answer(1000 + round);
      expect(
        answer,
        `round ${round}: no answer after '${bad.kind}'; stderr: ${server.stderr.join("").slice(-2000)}`,
      ).toMatchObject({ id: 1000 + round, result: null });
    }
    expect(server.child.exitCode).toBeNull();
    expect(server.stderr.join("")).toContain("malformed message dropped");
  }, 240_000);
});
