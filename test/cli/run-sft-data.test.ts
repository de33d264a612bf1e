// `arl run` with rollout.sft.data: the record file is found below the spec's folder (the data
// root), a bad record is refused before any run directory is written, and the run's summary
// says what the cold start trained on and its losses.
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { scriptedTrainerScript } from "../helpers/plans.js";

const spec = `
import "std/envs/rooms" as rooms

experiment own {
  policy { model: "builtin:tiny", sampling { max_new_tokens: 8 } }
  env quest extends rooms.world { tasks: 10 }
  harness { tools: quest.tools, format: text_action, max_turns: 2 }
  reward { success: outcome.success }
  algorithm { group_size: 2, advantage { baseline: leave_one_out } }
  rollout { tasks_per_batch: 1, iterations: 1, sft { data: "./data/records.jsonl", epochs: 2, heldout: 0.25 } }
  eval { every: 1, tasks: 1, before_training: false }
}
`;

const good = Array.from({ length: 8 }, (_, i) =>
  JSON.stringify({
    messages: [
      { role: "user", content: `hi ${i}` },
      { role: "assistant", content: `hello ${i}` },
    ],
  }),
);

function project(lines: readonly (string | Buffer)[], specText = spec): string {
  const cwd = mkdtempSync(path.join(tmpdir(), "arl-run-sft-"));
  writeFileSync(path.join(cwd, "spec.arl"), specText);
  mkdirSync(path.join(cwd, "data"));
  writeFileSync(
    path.join(cwd, "data", "records.jsonl"),
    Buffer.concat(lines.flatMap((l) => [Buffer.from(l), Buffer.from("\n")])),
  );
  return cwd;
}

const trainer = ["--trainer-command", `${process.execPath} ${scriptedTrainerScript}`];

describe("arl run with rollout.sft.data", () => {
  it("refuses a bad record with its file:line and writes no run directory", async () => {
    const cwd = project([...good, JSON.stringify({ messages: [{ role: "narrator", content: "x" }] })]);
    const run = await runArl(["run", "spec.arl", "--out", "runs", ...trainer], { cwd });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(
      `data/records.jsonl:9: messages[0]: unknown role "narrator" (system, user, assistant or tool)`,
    );
    expect(existsSync(path.join(cwd, "runs"))).toBe(false);
  }, 60_000);

  it("refuses a record that is not UTF-8 with its file:line instead of training on replacement characters", async () => {
    const latin1 = Buffer.from(
      JSON.stringify({
        messages: [
          { role: "user", content: "café" },
          { role: "assistant", content: "oui" },
        ],
      }),
      "latin1",
    );
    const cwd = project([...good, latin1]);
    const run = await runArl(["run", "spec.arl", "--out", "runs", ...trainer], { cwd });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(
      "data/records.jsonl:9: not UTF-8 text (an invalid byte sequence); save the file as UTF-8",
    );
    expect(existsSync(path.join(cwd, "runs"))).toBe(false);
  }, 60_000);

  it("reports a record file above rollout.sft.max_data_bytes at arl check, at the field, with how to raise the bound", async () => {
    const cwd = project(good, spec.replace("epochs: 2,", "epochs: 2, max_data_bytes: 100,"));
    const check = await runArl(["check", "spec.arl"], { cwd });
    expect(check.code).not.toBe(0);
    const output = check.stdout + check.stderr;
    expect(output).toMatch(
      /spec\.arl:10:\d+.*'rollout\.sft\.data': the data file '\.\/data\/records\.jsonl' holds \d+ bytes, more than rollout\.sft\.max_data_bytes \(100\); it was not read/,
    );
    expect(output).toMatch(
      /raise rollout\.sft\.max_data_bytes to at least \d+ \(at most 1073741824\), or cut the file/,
    );
    expect(output).not.toMatch(/internal error|\n\s+at /);
  }, 60_000);

  it("trains on the records found below the spec's folder and summarises the cold start", async () => {
    const cwd = project(good);
    const run = await runArl(["run", "spec.arl", "--out", "runs", ...trainer], { cwd });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /sft: 0 walkthroughs and 6 records over 2 epochs, train NLL [\d.]+ -> [\d.]+ per token, held-out [\d.]+ -> [\d.]+ \(2 records\)/,
    );
  }, 60_000);
});
