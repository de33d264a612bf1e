import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PassThrough } from "node:stream";
import {
  decodeFrame,
  encodeFrame,
  FrameDecoder,
  ProtocolError,
  writeFrame,
} from "../../src/trainer/protocol/framing.js";

describe("trainer protocol framing", () => {
  it("round-trips JSON with typed arrays of every dtype anywhere in the message", () => {
    const message = {
      id: 7,
      method: "train_step",
      params: {
        ids: { values: Int32Array.from([1, -2, 2147483647]), offsets: Int32Array.from([0, 1, 3]) },
        nested: [{ lp: Float32Array.from([-0.5, 1.25]) }, Float64Array.from([Math.PI]), Uint8Array.from([0, 1, 255])],
        plain: { s: "text", n: 1.5, b: true, z: null },
      },
    };
    const decoded = decodeFrame(encodeFrame(message)) as typeof message;
    expect(decoded.params.ids.values).toEqual(Int32Array.from([1, -2, 2147483647]));
    expect(decoded.params.nested[0]).toEqual({ lp: Float32Array.from([-0.5, 1.25]) });
    expect(decoded.params.nested[1]).toEqual(Float64Array.from([Math.PI]));
    expect(decoded.params.nested[2]).toEqual(Uint8Array.from([0, 1, 255]));
    expect(decoded.params.plain).toEqual({ s: "text", n: 1.5, b: true, z: null });
  });

  it("writes to a stream, piece by piece from the arrays themselves, exactly the bytes of encodeFrame (alignment padding included)", async () => {
    // Odd lengths and views into larger buffers put every later array off an 8-byte boundary.
    const backing = new Float32Array(9).map((_, i) => i / 4);
    const message = {
      id: 3,
      a: Uint8Array.from([1, 2, 3]),
      b: backing.subarray(1, 4),
      c: Float64Array.from([Math.E]),
      d: Int32Array.from([-7]),
      e: new Uint8Array(0),
    };
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    writeFrame(stream, message);
    stream.end();
    await new Promise((resolve) => stream.on("end", resolve));
    const written = Buffer.concat(chunks);
    expect(written.equals(encodeFrame(message))).toBe(true);
    expect(new FrameDecoder().push(written)).toEqual([message]);
  });

  it("carries bulk data as raw bytes: 256 x 4,096 int32 ids take 4 MiB plus a small header", () => {
    const ids = new Int32Array(256 * 4096);
    const frame = encodeFrame({ ids });
    expect(frame.length).toBeLessThan(ids.byteLength + 200);
  });

  it("decodes a stream split at arbitrary points, several frames at once", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 20 }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (rows, cuts) => {
          const frames = rows.map((r, i) => encodeFrame({ id: i, ids: Int32Array.from(r) }));
          const stream = Buffer.concat(frames);
          const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
          const decoder = new FrameDecoder();
          const out: unknown[] = [];
          let last = 0;
          for (const p of [...points, stream.length]) {
            out.push(...decoder.push(stream.subarray(last, p)));
            last = p;
          }
          expect(out).toEqual(rows.map((r, i) => ({ id: i, ids: Int32Array.from(r) })));
        },
      ),
      { numRuns: 100 },
    );
  });

  it("rejects a stream that is not in the framing, saying what it saw", () => {
    expect(() => new FrameDecoder().push(Buffer.from("hello from print()\n"))).toThrow(ProtocolError);
    expect(() => new FrameDecoder().push(Buffer.from("hello from print()\n"))).toThrow(/"hell"/);
  });
});
