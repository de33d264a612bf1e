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

const good = Array.from({ length: 8 }, (_, i) => JSON.stringify({ messages: [{ role: "user", content: `hi ${i}` }, { role: "assistant", content: `hello ${i}` }] }));

function project(lines: readonly string[]): string {
  const cwd = mkdtempSync(path.join(tmpdir(), "arl-run-sft-"));
  writeFileSync(path.join(cwd, "spec.arl"), spec);
  mkdirSync(path.join(cwd, "data"));
  writeFileSync(path.join(cwd, "data", "records.jsonl"), `${lines.join("\n")}\n`);
  return cwd;
}

const trainer = ["--trainer-command", `${process.execPath} ${scriptedTrainerScript}`];

describe("arl run with rollout.sft.data", () => {
  it("refuses a bad record with its file:line and writes no run directory", async () => {
    const cwd = project([...good, JSON.stringify({ messages: [{ role: "narrator", content: "x" }] })]);
    const run = await runArl(["run", "spec.arl", "--out", "runs", ...trainer], { cwd });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`data/records.jsonl:9: messages[0]: unknown role "narrator" (system, user, assistant or tool)`);
    expect(existsSync(path.join(cwd, "runs"))).toBe(false);
  }, 60_000);

  it("trains on the records found below the spec's folder and summarises the cold start", async () => {
    const cwd = project(good);
    const run = await runArl(["run", "spec.arl", "--out", "runs", ...trainer], { cwd });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/sft: 0 walkthroughs and 6 records over 2 epochs, train NLL [\d.]+ -> [\d.]+ per token, held-out [\d.]+ -> [\d.]+ \(2 records\)/);
  }, 60_000);
});
