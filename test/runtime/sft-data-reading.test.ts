// Reading rollout.sft.data in bounded memory (issue 28, defects 5-7): the file is read line by
// line in chunks and hashed in the same pass (a 600 MB file used to become one string past V8's
// limit), its size is bounded by rollout.sft.max_data_bytes (an error at `arl check`), a record
// by max_record_bytes, and a line that is not UTF-8 is refused by file:line instead of being
// trained on as U+FFFD. Small bounds and chunks stand in for the large files.
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { sha256File } from "../../src/plan/hash.js";
import { lowerModel } from "../../src/plan/lower.js";
import { fileLines } from "../../src/contracts/line-reader.js";
import { loadSftData, SftDataError, sftDataSource, type SftDataSource } from "../../src/runtime/run/cold-start/data.js";

const spec = (sft: string) => `
import "std/envs/rooms" as rooms

experiment own_data {
  policy { model: "builtin:tiny" }
  env quest extends rooms.world { tasks: 20 }
  harness { tools: quest.tools, format: text_action, max_turns: 2 }
  reward { success: outcome.success }
  algorithm { group_size: 2, advantage { baseline: leave_one_out } }
  rollout { tasks_per_batch: 2, iterations: 1, sft { data: "./records.jsonl", ${sft} } }
}
`;

const record = (i: number) =>
  JSON.stringify({
    messages: [
      { role: "user", content: `question ${i}` },
      { role: "assistant", content: `answer ${i}` },
    ],
  });

function compileIn(sft: string, records: string | Buffer) {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-sft-reading-"));
  writeFileSync(path.join(dir, "records.jsonl"), records);
  writeFileSync(path.join(dir, "spec.arl"), spec(sft));
  const result = new Compiler().check(path.join(dir, "spec.arl"));
  const lowered = result.model ? lowerModel(result.model) : { plans: [], diagnostics: [] };
  return { dir, diagnostics: [...result.diagnostics, ...lowered.diagnostics], plan: lowered.plans[0]?.plan };
}

function source(sft: string, records: string | Buffer): { dir: string; source: SftDataSource } {
  const { dir, plan, diagnostics } = compileIn(sft, records);
  const errors = diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0 || !plan) throw new Error(errors.map((e) => e.message).join("\n"));
  return { dir, source: sftDataSource(plan)! };
}

describe("the line reader", () => {
  it("yields every line of a file larger than its chunk, hashes every byte, and counts a line above the bound without holding it", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-lines-"));
    const lines = [
      "short",
      "",
      "a line that spans several chunks of seven bytes",
      "x".repeat(40),
      "é and 😀 split across chunks",
      "last, without a newline",
    ];
    const text = lines.join("\n");
    const file = path.join(dir, "lines.txt");
    writeFileSync(file, text);
    const hash = createHash("sha256");
    const read = [...fileLines(file, { maxLineBytes: 39, chunkBytes: 7, onChunk: (c) => hash.update(c) })].map((l) =>
      "tooLong" in l ? { line: l.line, tooLong: l.tooLong } : { line: l.line, text: l.bytes.toString("utf8") },
    );
    expect(read).toEqual([
      { line: 1, text: "short" },
      { line: 2, text: "" },
      { line: 3, tooLong: 47 },
      { line: 4, tooLong: 40 },
      { line: 5, text: "é and 😀 split across chunks" },
      { line: 6, text: "last, without a newline" },
    ]);
    expect(hash.digest("hex")).toBe(createHash("sha256").update(text).digest("hex"));
    // A file that ends in "\n" has no empty line after it.
    writeFileSync(file, "a\nb\n");
    expect([...fileLines(file, { maxLineBytes: 10, chunkBytes: 1 })].map((l) => l.line)).toEqual([1, 2]);
  });

  it("hashes a file in chunks to the sha256 of its bytes (how arl check and arl plan hash data files)", () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "arl-hash-")), "data.bin");
    const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 31) % 256));
    writeFileSync(file, bytes);
    expect(sha256File(file, 64)).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(sha256File(file, 7)).toBe(sha256File(file));
  });

  it("reads the records the same with any chunk size", () => {
    const { dir, source: s } = source("", Array.from({ length: 30 }, (_, i) => record(i)).join("\n") + "\n");
    const whole = loadSftData(s, dir);
    expect(whole.records).toHaveLength(30);
    expect(loadSftData(s, dir, 13)).toEqual(whole);
  });
});

describe("rollout.sft.max_data_bytes", () => {
  const records = Array.from({ length: 4 }, (_, i) => record(i)).join("\n") + "\n";

  it("is an error at the data field when compiling, with the size, the bound and how to raise it", () => {
    const { diagnostics } = compileIn("max_data_bytes: 100", records);
    const tooLarge = diagnostics.find((d) => d.code === "data-file-too-large");
    expect(tooLarge?.message).toBe(
      `'rollout.sft.data': the data file './records.jsonl' holds ${Buffer.byteLength(records)} bytes, more than rollout.sft.max_data_bytes (100); it was not read`,
    );
    expect(tooLarge?.hint).toBe(
      `raise rollout.sft.max_data_bytes to at least ${Buffer.byteLength(records)} (at most 1073741824), or cut the file`,
    );
    expect(tooLarge?.range.start.line).toBe(
      spec("")
        .split("\n")
        .findIndex((l) => l.includes("sft {")) + 1,
    );
    expect(
      compileIn(`max_data_bytes: ${Buffer.byteLength(records)}`, records).diagnostics.filter(
        (d) => d.severity === "error",
      ),
    ).toEqual([]);
  });

  it("is checked again when the run reads the file", () => {
    const { dir, source: s } = source("", records);
    expect(() => loadSftData({ ...s, max_data_bytes: 50 }, dir)).toThrow(
      `rollout.sft.data 'records.jsonl' holds ${Buffer.byteLength(records)} bytes, more than rollout.sft.max_data_bytes (50); it was not read`,
    );
  });
});

describe("records refused by file:line before anything trains", () => {
  it("refuses a record longer than rollout.sft.max_record_bytes", () => {
    const long = JSON.stringify({
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: "y".repeat(300) },
      ],
    });
    const { dir, source: s } = source("max_record_bytes: 200", [record(1), long, record(2)].join("\n"));
    expect(s.max_record_bytes).toBe(200);
    expect(() => loadSftData(s, dir)).toThrow(SftDataError);
    expect(() => loadSftData(s, dir)).toThrow(
      `records.jsonl:2: a record of ${long.length} bytes, more than rollout.sft.max_record_bytes (200): shorten or drop it, or raise max_record_bytes`,
    );
  });

  it("refuses a line that is not UTF-8 rather than training on replacement characters", () => {
    const bad = Buffer.concat([
      Buffer.from('{"messages": [{"role": "user", "content": "caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}, {"role": "assistant", "content": "ok"}]}'),
    ]);
    const { dir, source: s } = source(
      "",
      Buffer.concat([Buffer.from(`${record(1)}\n`), bad, Buffer.from(`\n${record(2)}\n`)]),
    );
    expect(() => loadSftData(s, dir)).toThrow(
      /1 invalid record; nothing was trained:\n {2}records\.jsonl:2: not UTF-8 text/,
    );
  });
});
