// A dataset env's rows file read under its bounds, and read from Parquet: a file above
// max_data_bytes is refused at check time and at run time without being read; a row above
// max_row_bytes is a bad row named by file:line (the line never held whole); a Parquet file
// written by pyarrow as veRL writes its rows (test/fixtures/parquet/make_fixtures.py) gives the
// same rows, columns, splits and confinement as JSON lines, its bytes hashed into the plan.
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readDatasetFile } from "../../src/contracts/dataset-rows.js";
import { EnvError } from "../../src/contracts/env.js";
import { createDatasetEnv } from "../../src/envs/adapters/dataset/index.js";
import { verifyPlanDataFiles } from "../../src/envs/data-files.js";
import { compileDatasetSpec as compileIn } from "../helpers/dataset.js";

const fixtures = fileURLToPath(new URL("../fixtures/parquet/", import.meta.url));
const sha = (bytes: string | Buffer) => createHash("sha256").update(bytes).digest("hex");

const rowLine = (i: number) => JSON.stringify({ prompt: `What is ${i} + 1?`, answer: String(i + 1) });

describe("dataset rows under max_data_bytes and max_row_bytes", () => {
  it("a file above max_data_bytes is an error at check time, and is refused at run time without being read", async () => {
    const rows = [0, 1, 2, 3, 4].map(rowLine).join("\n") + "\n";
    const size = Buffer.byteLength(rows);
    const { errors } = compileIn(`    data: "./rows.jsonl"\n    max_data_bytes: 50`, { "rows.jsonl": rows });
    expect(errors.map((d) => [d.code, d.message])).toEqual([
      [
        "data-file-too-large",
        `'env.q.data': the data file './rows.jsonl' holds ${size} bytes, more than env.q.max_data_bytes (50); it was not read`,
      ],
    ]);
    expect(errors[0]?.hint).toBe(
      `raise env.q.max_data_bytes to at least ${size} (at most 1073741824), or cut the file`,
    );
    // The plan compiled with room to spare; the file then grows past the bound before the run reads it.
    const {
      dir,
      env,
      errors: clean,
    } = compileIn(`    data: "./rows.jsonl"\n    max_data_bytes: ${size + 10}`, { "rows.jsonl": rows });
    expect(clean).toEqual([]);
    writeFileSync(path.join(dir, "rows.jsonl"), rows + rowLine(5) + "\n");
    const refusal = `dataset env: the data file 'rows.jsonl' holds ${size + rowLine(5).length + 1} bytes, more than max_data_bytes (${size + 10}); it was not read (raise the env's max_data_bytes, or cut the file)`;
    expect(() => verifyPlanDataFiles({ q: env! }, dir)).toThrow(refusal);
    await expect(createDatasetEnv({ root: dir }).create(env!, 0, 0)).rejects.toThrow(refusal);
  });

  it("a row above max_row_bytes is a bad row at its line; the rows around it are read", () => {
    const long = JSON.stringify({ prompt: "x".repeat(5000), answer: "1" });
    const rows = [rowLine(0), long, rowLine(2), rowLine(3), rowLine(4)].join("\n");
    const { errors } = compileIn(`    data: "./rows.jsonl"\n    max_row_bytes: 1000`, { "rows.jsonl": rows });
    expect(errors.map((d) => d.code)).toEqual(["dataset-row-invalid"]);
    expect(errors[0]?.message).toBe(
      `env 'q': bad rows in the data file:\nrows.jsonl:2: a row of ${long.length} bytes, more than max_row_bytes (1000): shorten or drop it, or raise max_row_bytes`,
    );
    expect(
      compileIn(`    data: "./rows.jsonl"\n    max_row_bytes: ${long.length}`, { "rows.jsonl": rows }).env?.tasks,
    ).toBe(5);
  });

  it("reads a file larger than its read chunk line by line: every row, its line, the file's sha256", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-dataset-files-"));
    // About 3 MiB: several of the reader's 1 MiB chunks, lines split across them.
    const rows = Array.from({ length: 40_000 }, (_, i) => rowLine(i)).join("\n") + "\n\n";
    writeFileSync(path.join(dir, "rows.jsonl"), rows);
    const { read, sha256 } = readDatasetFile(
      path.join(dir, "rows.jsonl"),
      { prompt: "prompt", answer: "answer", split: null, answerIsText: true },
      { maxDataBytes: 8 << 20, maxRowBytes: 200 },
    );
    expect("rows" in read && read.rows.length).toBe(40_000);
    expect("rows" in read && [read.rows[39_999]?.line, read.rows[39_999]?.answer]).toEqual([40_000, "40000"]);
    expect(sha256).toBe(sha(rows));
  });

  it("a line that is not UTF-8 is a bad row, not text with replacement characters", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-dataset-files-"));
    writeFileSync(
      path.join(dir, "rows.jsonl"),
      Buffer.concat([Buffer.from(rowLine(0) + "\n"), Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d, 0x0a])]),
    );
    const { read } = readDatasetFile(
      path.join(dir, "rows.jsonl"),
      { prompt: "prompt", answer: "answer", split: null, answerIsText: true },
      { maxDataBytes: 1 << 20, maxRowBytes: 1000 },
    );
    expect(read).toEqual({
      problems: [{ line: 2, problem: "the line is not UTF-8 text (an invalid byte sequence); save the file as UTF-8" }],
    });
  });
});

describe("Parquet rows (written by pyarrow, as veRL writes its datasets)", () => {
  const parquet = (name: string) => readFileSync(path.join(fixtures, name));
  const verlFields = `    data: "./rows.parquet"\n    answer_column: "reward_model.ground_truth"\n    split_column: "extra_info.split"\n    scorer: number`;

  it("reads chat-message prompts, nested columns and splits across row groups, the file's bytes hashed into the plan", async () => {
    const { dir, env, errors } = compileIn(verlFields, { "rows.parquet": parquet("verl-rows.parquet") });
    expect(errors).toEqual([]);
    expect(env?.tasks).toBe(4);
    expect(env?.data).toEqual({ path: "rows.parquet", sha256: sha(parquet("verl-rows.parquet")) });
    expect(env?.split_column).toEqual({ column: "extra_info.split", train: [[0, 3]], valid: [], test: [[3, 4]] });
    const kind = createDatasetEnv({ root: dir });
    const episode = await kind.create(env!, 3, 0);
    expect(await episode.reset()).toEqual({
      text: "What is 3 + 6?",
      messages: [{ role: "user", content: "What is 3 + 6?" }],
      signals: {},
    });
    expect(await episode.finalAnswer!("it is 9")).toMatchObject({ correct: true, score: 1 });
    // Columns the Python scorers are given arrive as JSON values: a 64-bit integer as a number.
    const { read } = readDatasetFile(
      path.join(dir, "rows.parquet"),
      { prompt: "prompt", answer: "reward_model.ground_truth", split: null, answerIsText: false },
      { maxDataBytes: 1 << 20, maxRowBytes: 4096 },
    );
    expect("rows" in read && read.rows[1]?.columns).toEqual({
      data_source: "arithmetic",
      prompt: [{ role: "user", content: "What is 1 + 2?" }],
      ability: "math",
      reward_model: { style: "rule", ground_truth: "3" },
      extra_info: { split: "train", index: 1 },
      big: 2 ** 40 + 1,
    });
  });

  it("bad rows are named by their row; a file hyparquet cannot decode is named as a whole; a changed file is refused at run time", async () => {
    const bad = compileIn(verlFields, { "rows.parquet": parquet("bad-rows.parquet") });
    expect(bad.errors[0]?.message).toBe(
      "env 'q': bad rows in the data file:\nrows.parquet row 3: column 'prompt' is a null, not a prompt (a string or chat messages)\nrows.parquet row 4: column 'reward_model.ground_truth' is missing (the ground truth the scorer needs)",
    );
    const zstd = compileIn(verlFields, { "rows.parquet": parquet("zstd-rows.parquet") });
    expect(zstd.errors.map((d) => d.code)).toEqual(["dataset-row-invalid"]);
    expect(zstd.errors[0]?.message).toMatch(
      /^env 'q': bad rows in the data file:\nrows\.parquet: not a Parquet file hyparquet can read: .*ZSTD/,
    );
    const { dir, env } = compileIn(verlFields, { "rows.parquet": parquet("verl-rows.parquet") });
    copyFileSync(path.join(fixtures, "bad-rows.parquet"), path.join(dir, "rows.parquet"));
    await expect(createDatasetEnv({ root: dir }).create(env!, 0, 0)).rejects.toThrow(EnvError);
    await expect(createDatasetEnv({ root: dir }).create(env!, 0, 0)).rejects.toThrow(
      "rows.parquet row 3: column 'prompt' is a null",
    );
  });
});
