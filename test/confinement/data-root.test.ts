// The run's data root (issue 11): where a plan's data files are found comes from the run, not
// from the process environment. `arl run` records it in the run directory; `--resume` uses the
// recorded one whatever ARL_SPEC_DIR and the working directory say.
import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSqlEnv, type SqlEnv } from "../../src/envs/worlds/sql/index.js";
import { DATA_ROOT_FILE } from "../../src/runtime/data-root.js";
import { runArl } from "../helpers/cli.js";
import { compilePlans, scriptedTrainerScript } from "../helpers/plans.js";
import { sqlSpec } from "./specs.js";

const trainer = `${process.execPath} ${scriptedTrainerScript}`;
const sha256Of = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

const spec = sqlSpec("./data/shop.sqlite", "./data/questions.jsonl");

function writeData(dir: string, question = "How many items are there?"): void {
  mkdirSync(path.join(dir, "data"), { recursive: true });
  const db = new Database(path.join(dir, "data", "shop.sqlite"));
  db.exec(
    "CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, name TEXT); INSERT OR REPLACE INTO items VALUES (1, 'pen'), (2, 'book');",
  );
  db.close();
  writeFileSync(
    path.join(dir, "data", "questions.jsonl"),
    `${Array.from({ length: 4 }, () => JSON.stringify({ question, sql: "SELECT COUNT(*) FROM items" })).join("\n")}\n`,
  );
}

/** A finished one-iteration run of the spec, started from the project's folder. */
async function finishedRun() {
  const top = mkdtempSync(path.join(tmpdir(), "arl-data-root-"));
  const project = path.join(top, "project");
  writeData(project);
  writeFileSync(path.join(project, "spec.arl"), spec);
  const out = path.join(top, "runs");
  const run = await runArl(["run", "spec.arl", "--out", out, "--trainer-command", trainer], { cwd: project });
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  const base = path.join(out, "e", "default");
  const runDir = path.join(base, readdirSync(base)[0]!);
  return { top, project, runDir };
}

const recorded = (runDir: string) =>
  (JSON.parse(readFileSync(path.join(runDir, DATA_ROOT_FILE), "utf8")) as { data_root: string }).data_root;

const savedSpecDir = process.env.ARL_SPEC_DIR;
afterEach(() => {
  if (savedSpecDir === undefined) delete process.env.ARL_SPEC_DIR;
  else process.env.ARL_SPEC_DIR = savedSpecDir;
});

describe("the run's data root", () => {
  it("is recorded in the run directory; --resume uses it, whatever ARL_SPEC_DIR and the working directory say", async () => {
    const { top, project, runDir } = await finishedRun();
    expect(recorded(runDir)).toBe(project);
    // Another shell: ARL_SPEC_DIR names a folder with other data under the same names.
    const elsewhere = path.join(top, "elsewhere");
    writeData(elsewhere, "Something else entirely?");
    process.env.ARL_SPEC_DIR = elsewhere;
    const resumed = await runArl(["run", "--resume", runDir, "--trainer-command", trainer], {
      cwd: elsewhere,
      env: { ARL_SPEC_DIR: elsewhere },
    });
    expect(resumed.stderr).toBe("");
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain("finished after 1 iterations");
    expect(recorded(runDir)).toBe(project);
  });

  it("--data-root at --resume moves it (recorded again) once the files there match the plan's sha256s", async () => {
    const { top, project, runDir } = await finishedRun();
    const moved = path.join(top, "moved");
    cpSync(project, moved, { recursive: true });
    rmSync(project, { recursive: true });
    const resumed = await runArl(["run", "--resume", runDir, "--data-root", moved, "--trainer-command", trainer], {
      cwd: top,
    });
    expect(resumed.code).toBe(0);
    expect(recorded(runDir)).toBe(moved);

    const other = path.join(top, "other");
    writeData(other, "Something else entirely?");
    const refused = await runArl(["run", "--resume", runDir, "--data-root", other, "--trainer-command", trainer], {
      cwd: top,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /the questions file '.*questions\.jsonl' has sha256 [0-9a-f]{64}, but the plan was compiled against [0-9a-f]{64}; refusing to run on different data/,
    );
    // The refused root did not replace the good one.
    expect(recorded(runDir)).toBe(moved);
  });

  it("a run directory without the record (an older arl) needs --data-root when its plan names data files", async () => {
    const { runDir } = await finishedRun();
    rmSync(path.join(runDir, DATA_ROOT_FILE));
    const resumed = await runArl(["run", "--resume", runDir, "--trainer-command", trainer], { cwd: tmpdir() });
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain("records no data root");
    expect(resumed.stderr).toContain("--data-root DIR");
    expect(existsSync(path.join(runDir, DATA_ROOT_FILE))).toBe(false);
  });

  it("the sql env never reads ARL_SPEC_DIR: without a root it refuses data files and still runs the demo", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-data-root-"));
    writeData(dir);
    const [plan] = compilePlans(
      spec.replace('database: "./data/shop.sqlite"\n    questions: "./data/questions.jsonl"', ""),
    );
    const demo = plan!.envs.bank as SqlEnv;
    const file = (name: string) => ({ path: `data/${name}`, sha256: sha256Of(path.join(dir, "data", name)) });
    const env: SqlEnv = { ...demo, database: file("shop.sqlite"), questions: file("questions.jsonl") };
    process.env.ARL_SPEC_DIR = dir;
    await expect(createSqlEnv().create(env, 0, 0)).rejects.toThrow(/made without a data root/);
    const instance = await createSqlEnv().create(demo, 0, 0);
    await instance.close();
  });
});
