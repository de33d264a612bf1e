// A checkpoint's files are read trusting nothing in them (issue 28): model.safetensors,
// optimizer.safetensors or trainer.json that is a device, a FIFO, garbage, a header length past
// the file, offsets that lie about the data or a file cut short is refused as invalid_request
// naming the file, before more than its declared and real sizes are read; the weights held stay.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ragged } from "../../src/contracts/trainer-protocol.js";
import { RequestError } from "../../src/trainer/protocol/server.js";
import { encodeSafetensors, readSafetensors, SafetensorsError } from "../../src/trainer/embedded/safetensors.js";
import { TinyTrainer } from "../../src/trainer/embedded/trainer.js";
import { tinyConfigure } from "../helpers/tiny-policy.js";

const SMALL = { embed: 16, hidden: 24, heads: 2, keyDim: 8, chunkTokens: 65_536 };
const root = mkdtempSync(path.join(tmpdir(), "arl-checkpoint-files-"));
const good = path.join(root, "good");
let tiny: TinyTrainer;

beforeAll(async () => {
  tiny = new TinyTrainer(SMALL);
  await tiny.init();
  tiny.configure(tinyConfigure(3, ["take", "key", "go"]));
  tiny.save(good);
});

/** A copy of the good checkpoint with `file` replaced by what `make` puts at the path. */
function damaged(name: string, file: string, make: (at: string) => void): string {
  const dir = path.join(root, name);
  mkdirSync(dir);
  for (const f of ["model.safetensors", "optimizer.safetensors", "trainer.json"])
    if (f !== file) copyFileSync(path.join(good, f), path.join(dir, f));
  make(path.join(dir, file));
  return dir;
}

const header = (n: bigint, rest: Buffer = Buffer.alloc(0)) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return Buffer.concat([b, rest]);
};
const json = (value: unknown) => {
  const text = Buffer.from(JSON.stringify(value));
  return header(BigInt(text.length), text);
};

/** The policy's log-probs of a fixed sequence: what a refused load must leave as it was. */
const logprobs = () => Array.from(tiny.logprobs(ragged([Int32Array.of(4, 5, 6)], Int32Array), "current", null).values);

describe("loading a checkpoint whose files are not what save wrote", () => {
  const cases: [string, string, (at: string) => void, RegExp][] = [
    ["zero", "model.safetensors", (at) => symlinkSync("/dev/zero", at), /model\.safetensors is not a regular file/],
    ["fifo", "model.safetensors", (at) => execFileSync("mkfifo", [at]), /model\.safetensors is not a regular file/],
    ["zero-json", "trainer.json", (at) => symlinkSync("/dev/zero", at), /trainer\.json is not a regular file/],
    [
      "garbage",
      "model.safetensors",
      (at) => writeFileSync(at, "garbage"),
      /model\.safetensors is not a safetensors file: 7 bytes/,
    ],
    [
      "huge-header",
      "model.safetensors",
      (at) => writeFileSync(at, header(2n ** 62n, Buffer.from("{}"))),
      /model\.safetensors is not a safetensors file: its header length 4611686018427387904 exceeds/,
    ],
    [
      "not-json",
      "model.safetensors",
      (at) => writeFileSync(at, header(4n, Buffer.from("{{{{"))),
      /model\.safetensors is not a safetensors file: its header is not JSON/,
    ],
    [
      "lying-offsets",
      "model.safetensors",
      (at) =>
        writeFileSync(
          at,
          json({ "policy.embed": { dtype: "F32", shape: [1_000_000_000], data_offsets: [0, 4_000_000_000] } }),
        ),
      /declares bytes 0 to 4000000000 .* but the file holds 0 bytes/,
    ],
    [
      "wrong-dtype",
      "optimizer.safetensors",
      (at) => writeFileSync(at, json({ x: { dtype: "F16", shape: [1], data_offsets: [0, 2] } })),
      /optimizer\.safetensors: tensor x has dtype "F16"/,
    ],
    [
      "cut",
      "model.safetensors",
      (at) => writeFileSync(at, readFileSync(path.join(good, "model.safetensors")).subarray(0, 2000)),
      /model\.safetensors: tensor .* but the file holds/,
    ],
  ];
  for (const [name, file, make, message] of cases) {
    it(`${name}: ${file} refused as invalid_request naming it, the weights held unchanged`, () => {
      const before = logprobs();
      const dir = damaged(name, file, make);
      let thrown: unknown;
      try {
        tiny.load(dir);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(RequestError);
      expect((thrown as RequestError).code).toBe("invalid_request");
      expect((thrown as Error).message).toMatch(message);
      expect((thrown as Error).message).toContain(path.join(dir, file));
      expect(logprobs()).toEqual(before);
      rmSync(dir, { recursive: true });
    });
  }

  it("a tensor whose shape is not the parameter's is refused, not handed to the model", () => {
    const dir = damaged("shape", "model.safetensors", (at) => {
      const { tensors, metadata } = readSafetensors(path.join(good, "model.safetensors"));
      const [name] = [...tensors.keys()];
      tensors.set(name!, { dtype: "F32", shape: [3], data: Float32Array.of(1, 2, 3) });
      writeFileSync(at, encodeSafetensors(tensors, metadata));
    });
    expect(() => tiny.load(dir)).toThrow(/holds 3 values for .*, whose shape/);
  });

  it("reads back what save wrote, and the reader alone refuses with SafetensorsError", () => {
    expect(tiny.load(good).policy_version).toBe(0);
    expect(() => readSafetensors(path.join(root, "missing.safetensors"))).toThrow(SafetensorsError);
  });
});
