// A damaged run directory on --resume: a torn tail of an append-only file is cut back to the
// last committed record (and said so); a committed file that is shorter, missing or changed is
// refused with a message naming it (exit 2), and the refusal changes nothing on disk; a stale,
// truncated or over-deep plan.json, a broken state.json and a folder that is not a run are user
// errors, never "internal error".
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import { readBuffer } from "../../src/episode/buffer.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { runArl } from "../helpers/cli.js";
import { compilePlans, countingExperiment, scriptedTrainerScript } from "../helpers/plans.js";

const trainer = { file: process.execPath, args: [scriptedTrainerScript] };
const trainerFlag = ["--trainer-command", `${process.execPath} ${scriptedTrainerScript}`];
const spec = countingExperiment({
  name: "counting",
  seed: 3,
  rollout: "iterations: 2",
  evaluation: "eval { every: 1, tasks: 2, k: [1] }",
});

/** Every file below `dir` with its bytes, to show that a refused resume touched nothing. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full);
      else out.set(path.relative(dir, full), readFileSync(full).toString("base64"));
    }
  };
  walk(dir);
  return out;
}

/** A run stopped after committing iteration 1 of 2: what each case damages and resumes. */
let stoppedRun: string;
let committedRecords: number;

beforeAll(async () => {
  const [plan] = compilePlans(spec);
  const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-damage-")), plan!);
  const stop = new AbortController();
  await executePlan({
    plan: plan!,
    runDir,
    trainer,
    envs: envKinds,
    log: () => undefined,
    progress: () => stop.abort(),
    stop: stop.signal,
  });
  expect(runDir.readState().iteration).toBe(1);
  stoppedRun = runDir.dir;
  committedRecords = readBuffer(runDir.bufferPath).records.length;
});

function damagedCopy(damage: (dir: string) => void): string {
  const dir = path.join(mkdtempSync(path.join(tmpdir(), "arl-damaged-")), "run");
  cpSync(stoppedRun, dir, { recursive: true });
  damage(dir);
  return dir;
}

const resume = (dir: string) => runArl(["run", "--resume", dir, ...trainerFlag], { cwd: path.dirname(dir) });

const FILES = ["metrics.jsonl", "buffer.arlbuf", "eval/iteration-00001.jsonl"] as const;
const appendOnly = new Set<string>(["metrics.jsonl", "buffer.arlbuf"]);

describe("--resume of a damaged run directory", () => {
  for (const file of FILES) {
    it(`${file} with a torn tail: ${appendOnly.has(file) ? "cut back to the committed record, said so, and the run completes" : "refused (it is replaced whole, never appended)"}`, async () => {
      const dir = damagedCopy((d) =>
        appendFileSync(
          path.join(d, file),
          file.endsWith(".arlbuf") ? Buffer.from("ARL1\x10\x00\x00\x00", "latin1") : '{"iteration":2,"succ',
        ),
      );
      const before = snapshot(dir);
      const r = await resume(dir);
      expect(r.stderr).not.toContain("internal error");
      if (!appendOnly.has(file)) {
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(path.join(dir, file));
        expect(snapshot(dir)).toEqual(before);
        return;
      }
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(
        new RegExp(`${file.replace(".", "\\.")}: dropped \\d+ bytes after the last committed record`),
      );
      const after = RunDirectory.open(dir);
      expect(after.readMetrics().map((m) => m.iteration)).toEqual([1, 2]);
      const buffer = readBuffer(after.bufferPath);
      expect(buffer.partialBytes).toBe(0);
      expect(buffer.records.length).toBe(2 * committedRecords);
    });

    for (const [damage, apply] of [
      ["truncated below its commit", (f: string) => truncateSync(f, statSync(f).size - 7)],
      ["deleted", (f: string) => rmSync(f)],
      [
        "changed within its committed bytes",
        (f: string) => writeFileSync(f, Buffer.from(readFileSync(f).map((b, i) => (i === 20 ? b ^ 1 : b)))),
      ],
    ] as const) {
      it(`${file} ${damage}: refused with the file named, nothing on disk changed`, async () => {
        const dir = damagedCopy((d) => apply(path.join(d, file)));
        const before = snapshot(dir);
        const r = await resume(dir);
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(path.join(dir, file));
        expect(r.stderr).not.toContain("internal error");
        expect(r.stdout).not.toContain("resumed after");
        expect(snapshot(dir)).toEqual(before);
      });
    }
  }

  it("a torn tail beside a damaged file: refused, and the tail is not cut (a refused resume changes nothing)", async () => {
    const dir = damagedCopy((d) => {
      appendFileSync(path.join(d, "metrics.jsonl"), '{"iteration":2,"succ');
      const buffer = path.join(d, "buffer.arlbuf");
      truncateSync(buffer, statSync(buffer).size - 7);
    });
    const before = snapshot(dir);
    const r = await resume(dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(path.join(dir, "buffer.arlbuf"));
    expect(snapshot(dir)).toEqual(before);
  });

  it("a state.json of an older arl (no checksums): resumes on its lengths, saying so, and still refuses a truncated file", async () => {
    const legacy = (d: string) => {
      const {
        files: _files,
        planHash: _hash,
        ...old
      } = JSON.parse(readFileSync(path.join(d, "state.json"), "utf8")) as Record<string, unknown>;
      writeFileSync(path.join(d, "state.json"), JSON.stringify(old));
    };
    const ok = await resume(damagedCopy(legacy));
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("records no checksums: checking the committed lengths only");
    const cut = await resume(damagedCopy((d) => (legacy(d), truncateSync(path.join(d, "metrics.jsonl"), 10))));
    expect(cut.code).toBe(2);
    expect(cut.stderr).toContain("metrics.jsonl has 10 bytes, fewer than");
  });

  it("a missing committed checkpoint is refused, naming it", async () => {
    const dir = damagedCopy((d) => rmSync(path.join(d, "checkpoints", "iteration-00001"), { recursive: true }));
    const r = await resume(dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${path.join(dir, "checkpoints", "iteration-00001")} is missing`);
  });

  it("a moved run directory resumes from its own checkpoint, not the one at its old path", async () => {
    const dir = damagedCopy(() => undefined);
    const r = await resume(dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`from ${path.join(dir, "checkpoints", "iteration-00001")}`);
  });
});

describe("--resume of what is not a resumable run", () => {
  const cases: [string, (dir: string) => void, RegExp][] = [
    [
      "plan.json edited after the run started",
      (d) =>
        writeFileSync(
          path.join(d, "plan.json"),
          readFileSync(path.join(d, "plan.json"), "utf8").replace('"seed": 3', '"seed": 4'),
        ),
      /plan\.json was changed after the run started/,
    ],
    ["plan.json cut short", (d) => truncateSync(path.join(d, "plan.json"), 100), /plan\.json: not valid JSON/],
    [
      "plan.json not a plan",
      (d) => writeFileSync(path.join(d, "plan.json"), '{"experiment": 1}'),
      /plan\.json: not a valid plan/,
    ],
    ["state.json cut short", (d) => truncateSync(path.join(d, "state.json"), 30), /state\.json is not valid JSON/],
    [
      "state.json not a commit record",
      (d) => writeFileSync(path.join(d, "state.json"), '{"iteration": "two"}'),
      /state\.json is not a run's commit record: .* at iteration/,
    ],
    ["state.json deleted", (d) => rmSync(path.join(d, "state.json")), /state\.json is missing/],
  ];
  for (const [name, damage, message] of cases) {
    it(`${name}: exit 2 with the file and the problem`, async () => {
      const dir = damagedCopy(damage);
      const before = snapshot(dir);
      const r = await resume(dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/internal error|bug in arl/);
      expect(snapshot(dir)).toEqual(before);
    });
  }

  it("a folder that is not a run directory, and one that does not exist", async () => {
    const empty = mkdtempSync(path.join(tmpdir(), "arl-notrun-"));
    for (const dir of [empty, path.join(empty, "missing")]) {
      const r = await resume(dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/is not a run directory|does not exist/);
      expect(r.stderr).not.toContain("internal error");
    }
  });

  it("a plan nested 1,000 deep, given to arl run or found in a run directory, is refused by depth with the file and line", async () => {
    const [plan] = compilePlans(spec);
    let deep: unknown = { op: "signal", name: "x" };
    for (let i = 0; i < 1000; i++) deep = { op: "neg", args: [deep] };
    const text = JSON.stringify({ ...plan!, reward: { ...plan!.reward, terms: { success: deep } } }, null, 1);
    const folder = mkdtempSync(path.join(tmpdir(), "arl-deep-"));
    writeFileSync(path.join(folder, "deep.json"), text);
    const direct = await runArl(["run", "deep.json", ...trainerFlag], { cwd: folder });
    expect(direct.code).toBe(2);
    expect(direct.stderr).toMatch(/deep\.json:\d+:\d+: the plan nests deeper than 256 levels/);
    expect(direct.stderr).not.toContain("internal error");
    const dir = damagedCopy((d) => writeFileSync(path.join(d, "plan.json"), text));
    const resumed = await resume(dir);
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toMatch(/plan\.json:\d+:\d+: the plan nests deeper than 256 levels/);
    expect(existsSync(path.join(folder, "runs"))).toBe(false);
  });
});
