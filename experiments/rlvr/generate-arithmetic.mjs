#!/usr/bin/env node
// Writes data/arithmetic.jsonl: every sum a + b of two numbers 0-9 (100 rows), as prompt, answer,
// split and data_source, one JSON object a line; and data/arithmetic-sft.jsonl, the 80 train rows as
// chat records (question, then the sum as the answer) for the cold start of sums_cold_start. The split is fixed by a hash of the question, so
// the file is the same bytes on every machine: 80 train rows, 20 held-out test rows whose pairs
// never appear in training (their swapped pair may). Run: node experiments/rlvr/generate-arithmetic.mjs
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const rows = [];
for (let a = 0; a <= 9; a++) {
  for (let b = 0; b <= 9; b++) {
    const prompt = `What is ${a} + ${b} ?`;
    const rank = createHash("sha256").update(prompt).digest().readUInt32BE(0);
    rows.push({ prompt, answer: String(a + b), rank, data_source: "arithmetic" });
  }
}
// The 20 rows of lowest hash rank are held out.
const held = new Set([...rows].sort((x, y) => x.rank - y.rank).slice(0, 20).map((r) => r.prompt));
const lines = rows.map(({ prompt, answer, data_source }) => JSON.stringify({ prompt, answer, split: held.has(prompt) ? "test" : "train", data_source }));
writeFileSync(fileURLToPath(new URL("./data/arithmetic.jsonl", import.meta.url)), `${lines.join("\n")}\n`);
// Train rows only: the held-out pairs are never shown, not even in the cold start.
const records = rows.filter((r) => !held.has(r.prompt)).map(({ prompt, answer }) => JSON.stringify({ messages: [{ role: "user", content: prompt }, { role: "assistant", content: answer }] }));
writeFileSync(fileURLToPath(new URL("./data/arithmetic-sft.jsonl", import.meta.url)), `${records.join("\n")}\n`);
