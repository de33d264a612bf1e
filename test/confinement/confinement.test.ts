// Confinement: no path a spec or plan names (an import, a data file) reaches a file outside the
// project, whether written as an absolute path, with `..`, or through a symbolic link to a file
// or to a folder. Each case asserts the diagnostic or refusal and that nothing of the outside
// file appears in any output.
import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { ModuleLoader } from "../../src/language/imports.js";
import { Workspace } from "../../src/lsp/workspace.js";
import { createSqlEnv, type SqlEnv } from "../../src/envs/worlds/sql/index.js";
import { EnvError } from "../../src/contracts/env.js";
import { planHash } from "../../src/plan/hash.js";
import { loweringContext, lowerModel } from "../../src/plan/lower.js";
import type { Plan } from "../../src/plan/schema.js";
import { renderPlanSchema } from "../../src/plan/write-schema.js";
import { runArl } from "../helpers/cli.js";
import { scriptedTrainerScript } from "../helpers/plans.js";
import { sqlSpec } from "./specs.js";

const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/** The first line of every outside file: shaped like /etc/passwd, so JSON.parse and the parser would quote it. */
const SECRET = "root:x:0:0:OUTSIDE-SECRET-7f3a:/root:/bin/bash";
const SECRET_PART = "OUTSIDE-SECRET-7f3a";

const routes = ["absolute", "dot-dot", "linked file", "linked folder"] as const;
type Route = (typeof routes)[number];

/**
 * A project folder beside an outside folder holding the secret under `name`, with a link to
 * that file and a link to that folder inside the project.
 */
function layout(name: string) {
  const top = mkdtempSync(path.join(tmpdir(), "arl-confine-"));
  const outside = path.join(top, "outside");
  const project = path.join(top, "project");
  mkdirSync(outside);
  mkdirSync(path.join(project, "data"), { recursive: true });
  writeFileSync(path.join(outside, name), `${SECRET}\n`);
  symlinkSync(path.join(outside, name), path.join(project, `linked-${name}`));
  symlinkSync(outside, path.join(project, "linked-folder"));
  const written = (route: Route): string =>
    ({
      absolute: path.join(outside, name),
      "dot-dot": `../outside/${name}`,
      "linked file": `./linked-${name}`,
      "linked folder": `./linked-folder/${name}`,
    })[route];
  return { top, outside, project, written, secretSha256: sha(`${SECRET}\n`) };
}

const noSecret = (...outputs: string[]) => {
  for (const out of outputs) expect(out).not.toContain(SECRET_PART);
};

// --- imports ---------------------------------------------------------------------------------

describe("imports", () => {
  it.each(routes)("%s: refused at the import's path string, never read", async (route) => {
    const { project, written } = layout("secret.arl");
    const spec = written(route).replace(/\.arl$/, "");
    writeFileSync(
      path.join(project, "main.arl"),
      `import "${spec}" as x\nexperiment e { policy { model: "builtin:tiny" } }\n`,
    );
    const entry = path.join(project, "main.arl");
    const read: string[] = [];
    const program = new ModuleLoader({ readFile: (f) => (read.push(f), readFileSync(f, "utf8")) }).load(entry);
    const refusal = program.diagnostics.find(
      (d) => d.code === (route === "absolute" ? "invalid-import-path" : "import-outside-root"),
    );
    expect(refusal, JSON.stringify(program.diagnostics)).toBeDefined();
    expect(refusal!.range.start).toMatchObject({ line: 1, column: 8 });
    expect(refusal!.hint).toBeTruthy();
    if (route.startsWith("linked")) expect(refusal!.message).toContain("symbolic link");
    expect(read).toEqual([entry]);
    expect([...program.modules.keys()]).toEqual([entry]);
    noSecret(JSON.stringify(program.diagnostics));

    const check = await runArl(["check", "main.arl"], { cwd: project });
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`main.arl:1:8: error[${refusal!.code}]`);
    noSecret(check.stdout, check.stderr);
  });

  it.each(routes)("%s: the language server refuses it too", (route) => {
    const { project, written } = layout("secret.arl");
    const entry = path.join(project, "main.arl");
    writeFileSync(entry, `import "${written(route).replace(/\.arl$/, "")}" as x\n`);
    const snapshot = new Workspace().snapshot(entry);
    expect(snapshot.program.diagnostics.map((d) => d.code)).toEqual([
      route === "absolute" ? "invalid-import-path" : "import-outside-root",
    ]);
    expect([...snapshot.program.modules.keys()]).toEqual([entry]);
    noSecret(JSON.stringify(snapshot.program.diagnostics));
  });

  it("a link that stays inside the project is followed", () => {
    const { project } = layout("secret.arl");
    writeFileSync(path.join(project, "data", "common.arl"), "env shared {}\n");
    symlinkSync(path.join(project, "data"), path.join(project, "lib"));
    const entry = path.join(project, "main.arl");
    writeFileSync(entry, 'import "./lib/common" as c\n');
    const program = new ModuleLoader().load(entry);
    expect(program.diagnostics).toEqual([]);
    expect([...program.modules.keys()]).toEqual([entry, path.join(project, "lib", "common.arl")]);
  });
});

// --- data files ------------------------------------------------------------------------------

/** Every data-file field of the plan's envs, read from the published plan schema (fields typed DataFile). */
function dataFileFields(): string[] {
  const schema = JSON.parse(renderPlanSchema()) as {
    $defs: Record<
      string,
      { oneOf?: { properties: Record<string, unknown> }[]; anyOf?: { properties: Record<string, unknown> }[] }
    >;
  };
  const env = schema.$defs.Env!;
  const out: string[] = [];
  for (const option of env.oneOf ?? env.anyOf ?? []) {
    const kind = (option.properties.kind as { const: string }).const;
    for (const [field, sub] of Object.entries(option.properties))
      if (JSON.stringify(sub).includes('"#/$defs/DataFile"')) out.push(`${kind}.${field}`);
  }
  return out.sort();
}

/** The data-file fields this table covers: a new field fails the first test until it has rows. */
const DATA_FIELDS = ["sql.database", "sql.questions"] as const;
type DataField = (typeof DATA_FIELDS)[number];
/**
 * Data-file fields whose confinement is tested with their kind (test/envs/agent.test.ts, test/envs/dataset.test.ts: at
 * lowering and at run time; test/plan/host-library-knobs.test.ts: skyrl-gym's rows at lowering); and `code`, the
 * user's program files hashed into the plan for its identity alone, only from inside the spec's folder and never
 * opened by a run (test/plan/env-code.test.ts).
 */
const COVERED_WITH_THEIR_KIND = [
  "agent.code",
  "agent.task_file",
  "dataset.data",
  "dataset.verifier",
  "gymnasium.code",
  "skyrl_gym.rows",
  "swe.requirements",
] as const;

/** A real database and questions inside the project, for the field a case does not test. */
function projectData(project: string) {
  const db = new Database(path.join(project, "data", "shop.sqlite"));
  db.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO items VALUES (1, 'pen'), (2, 'book');");
  db.close();
  const questions =
    Array.from({ length: 4 }, () =>
      JSON.stringify({ question: "How many items are there?", sql: "SELECT COUNT(*) FROM items" }),
    ).join("\n") + "\n";
  writeFileSync(path.join(project, "data", "questions.jsonl"), questions);
  const file = (name: string) => ({
    path: `data/${name}`,
    sha256: sha(readFileSync(path.join(project, "data", name))),
  });
  return { database: file("shop.sqlite"), questions: file("questions.jsonl") };
}

const field = (f: DataField) => f.slice("sql.".length) as "database" | "questions";

describe("data files", () => {
  it("the table covers every data-file field of the env schemas", () => {
    expect(dataFileFields()).toEqual([...DATA_FIELDS, ...COVERED_WITH_THEIR_KIND].sort());
  });

  describe.each(DATA_FIELDS)("%s in a spec", (f) => {
    it.each(routes)("%s: data-file-outside-root at the string, for check and plan, never hashed", async (route) => {
      const { project, written } = layout("secret.txt");
      projectData(project);
      const bad = written(route);
      const spec =
        field(f) === "database" ? sqlSpec(bad, "./data/questions.jsonl") : sqlSpec("./data/shop.sqlite", bad);
      writeFileSync(path.join(project, "spec.arl"), spec);
      const line = spec.split("\n").findIndex((l) => l.includes(`${field(f)}: `)) + 1;
      const column = spec.split("\n")[line - 1]!.indexOf('"') + 1;

      for (const hashData of [false, true]) {
        const result = new Compiler().check(path.join(project, "spec.arl"), { plan: false });
        expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
        const lowered = lowerModel(result.model!, { ...loweringContext(result.model!.program), hashData });
        expect(lowered.plans).toEqual([]);
        expect(lowered.diagnostics.map((d) => [d.code, d.range.start.line, d.range.start.column])).toEqual([
          ["data-file-outside-root", line, column],
        ]);
        expect(lowered.diagnostics[0]!.hint).toContain("inside the experiment's folder");
        noSecret(JSON.stringify(lowered.diagnostics));
      }

      const check = await runArl(["check", "spec.arl"], { cwd: project });
      expect(check.code).toBe(1);
      expect(check.stdout).toContain(`spec.arl:${line}:${column}: error[data-file-outside-root]`);
      const plan = await runArl(["plan", "spec.arl", "--json"], { cwd: project });
      expect(plan.code).toBe(1);
      expect(plan.stdout).toBe("");
      noSecret(check.stdout, check.stderr, plan.stdout, plan.stderr);
    });
  });

  describe.each(DATA_FIELDS)("%s in a plan, at run time", (f) => {
    it.each(routes)("%s: the sql env refuses it before opening it, even with the file's own sha256", async (route) => {
      const { project, written, secretSha256 } = layout("secret.txt");
      const data = projectData(project);
      const env: SqlEnv = {
        ...(compileBank(project) as SqlEnv),
        ...data,
        [field(f)]: { path: written(route), sha256: secretSha256 },
      };
      const failure = await createSqlEnv({ root: project })
        .create(env, 0, 0)
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failure).toBeInstanceOf(EnvError);
      expect((failure as Error).message).toContain(`the plan's ${field(f)} file`);
      expect((failure as Error).message).toContain("is refused");
      noSecret((failure as Error).message);
    });
  });

  describe.each(DATA_FIELDS)("%s in a hand-edited plan (hash recomputed)", (f) => {
    it.each(routes)("%s: 'arl run PLAN.json' refuses it and prints nothing of the file", async (route) => {
      const { project, written, secretSha256 } = layout("secret.txt");
      const plan = editedPlan(project, { [field(f)]: { path: written(route), sha256: secretSha256 } });
      writeFileSync(path.join(project, "plan.json"), JSON.stringify(plan));
      const run = await runArl(
        ["run", "plan.json", "--out", "runs", "--trainer-command", `${process.execPath} ${scriptedTrainerScript}`],
        { cwd: project },
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`the plan's ${field(f)} file '${written(route)}' is refused`);
      noSecret(run.stdout, run.stderr);
      // Refused before anything is written: no run directory is left behind.
      expect(existsSync(path.join(project, "runs"))).toBe(false);
    });
  });
});

describe("damaged data inside the project", () => {
  it("a questions file that is not JSON is named with its line, not quoted", async () => {
    const { project } = layout("secret.txt");
    const data = projectData(project);
    writeFileSync(path.join(project, "data", "questions.jsonl"), `${SECRET}\n`);
    const env: SqlEnv = {
      ...(compileBank(project) as SqlEnv),
      ...data,
      questions: { path: "data/questions.jsonl", sha256: sha(`${SECRET}\n`) },
    };
    await expect(createSqlEnv({ root: project }).create(env, 0, 0)).rejects.toThrow(
      /questions\.jsonl:1: not a JSON object \(the line is not valid JSON/,
    );
    await createSqlEnv({ root: project })
      .create(env, 0, 0)
      .catch((error: Error) => noSecret(error.message));
  });

  it("a database whose sha256 differs is reported as the database, also when the questions are missing", async () => {
    const { project } = layout("secret.txt");
    const data = projectData(project);
    const env: SqlEnv = {
      ...(compileBank(project) as SqlEnv),
      database: { ...data.database, sha256: "0".repeat(64) },
      questions: null,
    };
    await expect(createSqlEnv({ root: project }).create(env, 0, 0)).rejects.toThrow(
      /the database file '.*shop\.sqlite' has sha256 [0-9a-f]{64}, but the plan was compiled against 0{64}/,
    );
  });
});

// --- helpers ---------------------------------------------------------------------------------

/** The plan of a clean spec with the project's own data files. */
function cleanPlan(project: string): Plan {
  writeFileSync(path.join(project, "spec.arl"), sqlSpec("./data/shop.sqlite", "./data/questions.jsonl"));
  const result = new Compiler().check(path.join(project, "spec.arl"));
  expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  const lowered = lowerModel(result.model!);
  expect(lowered.diagnostics).toEqual([]);
  return lowered.plans[0]!.plan;
}

/** The bank env of the clean plan (after `projectData`). */
function compileBank(project: string): Plan["envs"][string] {
  return cleanPlan(project).envs.bank!;
}

/** The clean plan with the bank env's fields replaced and the hash recomputed: a hand-edited plan that passes the hash check. */
function editedPlan(project: string, fields: Partial<SqlEnv>): Plan {
  projectData(project);
  const plan = cleanPlan(project);
  const edited = { ...plan, envs: { ...plan.envs, bank: { ...(plan.envs.bank as SqlEnv), ...fields } } } as Plan;
  return { ...edited, hash: planHash(edited) };
}
