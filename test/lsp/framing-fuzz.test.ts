// A seeded, bounded fuzzer of the JSON-RPC framing: bad headers, huge lengths, partial bodies,
// garbage between messages and bodies that are JSON but not JSON-RPC, cut into random chunks.
// After each, a valid request must still be answered (the server never wedges).
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StreamMessageReader, type RequestMessage } from "vscode-languageserver-protocol/node";
import { mulberry32 as rng } from "../../src/contracts/random.js";
import { FramingGuard } from "../../src/lsp/framing.js";
import { frame, probe, RawServer } from "./raw.js";

type Random = () => number;
const pick = <T>(next: Random, list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
const bytes = (next: Random, n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(next() * 256)));

/** One malformed piece of input, of a random kind; `kind` names it for the failure message. */
function malformed(next: Random): { kind: string; data: Buffer } {
  const valid = probe(-1);
  const kinds: Record<string, () => Buffer | string> = {
    "non-numeric length": () => `Content-Length: ${pick(next, ["lots", "1e12", "-1", "0x20", "", "12abc", "NaN", "١٢"])}\r\n\r\n{}`,
    "huge length": () => `Content-Length: ${pick(next, ["1000000000000", "99999999999999999999", String(2 ** 53), "68719476736"])}\r\n\r\n`,
    "no length": () => `Content-Type: application/vscode-jsonrpc\r\n\r\n{}`,
    "two lengths": () => `Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
    "partial body": () => valid.subarray(0, valid.indexOf("\r\n\r\n") + 4 + Math.floor(next() * 20)),
    "length too long": () => `Content-Length: ${40 + Math.floor(next() * 400)}\r\n\r\n{"jsonrpc":"2.0"}`,
    "length too short": () => `Content-Length: ${1 + Math.floor(next() * 10)}\r\n\r\n{"jsonrpc":"2.0","method":"x"}`,
    "random bytes": () => bytes(next, 1 + Math.floor(next() * 300)),
    "garbage text": () => pick(next, ["hello", "\r\n", "\r\n\r\n", "Content-Length", "Content-Length:", ":::", "{}\r\n\r\n"]),
    "long header": () => `X-Junk: ${"y".repeat(9000 + Math.floor(next() * 3000))}`,
    "non-JSON body": () => {
      const body = bytes(next, 1 + Math.floor(next() * 50));
      return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]);
    },
    "JSON, not JSON-RPC": () => frame(pick(next, [[], [1, 2], { jsonrpc: "2.0" }, { id: -2 }, { jsonrpc: "2.0", id: -3, method: 7 }, { jsonrpc: "2.0", id: -4, method: "textDocument/hover", params: "x" }])),
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
  for (let at = 0; at < data.length; ) {
    const n = 1 + Math.floor(next() * Math.min(data.length - at, 200));
    out.push(data.subarray(at, at + n));
    at += n;
  }
  return out;
}

describe("framing fuzzer: the guard in front of vscode-jsonrpc's reader", () => {
  it("delivers every valid request after 150 seeded rounds of malformed input, with no reader error", async () => {
    const next = rng(13);
    const input = new PassThrough();
    const guard = new FramingGuard({ log: () => {}, stallMs: 5, maxContentLength: 1 << 20 });
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
    server = await RawServer.start();
  }, 90_000);
  afterAll(() => server.stop());

  it("answers a valid request after each of 25 seeded rounds of malformed input", async () => {
    const next = rng(29);
    for (let round = 1; round <= 25; round++) {
      const bad = malformed(next);
      for (const c of chunks(next, Buffer.concat([bad.data, probe(1000 + round)]))) server.write(c);
      const answer = await server.answer(1000 + round);
      expect(answer, `round ${round}: no answer after '${bad.kind}'; stderr: ${server.stderr.join("").slice(-2000)}`).toMatchObject({ id: 1000 + round, result: null });
    }
    expect(server.child.exitCode).toBeNull();
    expect(server.stderr.join("")).toContain("malformed message dropped");
  }, 240_000);
});
