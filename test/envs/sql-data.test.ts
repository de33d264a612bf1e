// The built-in sql env's data: the bundled bank_demo (the same bytes on every machine), data files
// a spec names, and the text helpers (SQL scanning, table text and comparison).
import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { generateDemo, questionsJsonl } from "../../src/envs/worlds/sql/demo.js";
import { createSqlEnv, sqlEnv, type SqlEnv } from "../../src/envs/worlds/sql/index.js";
import { scanSql, tablesMatch, textTable } from "../../src/envs/worlds/sql/text.js";
import { EnvError, type StepResult } from "../../src/contracts/env.js";
import { call, bank, useBankEnv, start } from "../helpers/sql-env.js";

const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

// sha256 of the demo's SQL script and questions (JSON lines); pure JS output, so the same on every
// machine. Update them when the generator changes on purpose.
const DEMO_SCRIPT_SHA256 = "3355f9d86e6f316fa7fd0440830e5224e5aed29770deb71f4c44c24a646f5afd";

const DEMO_QUESTIONS_SHA256 = "2948684e7bccb7d3eb1460cfe5e3876b6639a4feb912c3a51303972bfd2c324e";

// The database file built from the script: depends on the SQLite that better-sqlite3 bundles
// (pinned in package.json); update it with a deliberate upgrade.
const DEMO_DATABASE_SHA256 = "4f7e1d43579c2ebe4cefa1a50090601bdf0ebaffc46d9be9320d9480824eda56";

useBankEnv();

describe("sql env: the bank_demo data", () => {
  it("is generated deterministically: the same script, database bytes and questions twice", () => {
    const a = generateDemo();
    const b = generateDemo();
    expect(sha(b.script)).toBe(sha(a.script));
    expect(sha(b.database)).toBe(sha(a.database));
    expect(sha(questionsJsonl(b.questions))).toBe(sha(questionsJsonl(a.questions)));
    expect(sha(a.script)).toBe(DEMO_SCRIPT_SHA256);
    expect(sha(questionsJsonl(a.questions))).toBe(DEMO_QUESTIONS_SHA256);
    expect(sha(a.database)).toBe(DEMO_DATABASE_SHA256);
    expect(a.questions.length).toBeGreaterThanOrEqual(bank.tasks);
  });

  it("holds four tables of a few hundred rows", async () => {
    const db = new Database(generateDemo().database, { readonly: true });
    try {
      const count = (t: string) => db.prepare(`SELECT COUNT(*) FROM ${t}`).pluck().get() as number;
      expect({
        branches: count("branches"),
        customers: count("customers"),
        accounts: count("accounts"),
        transactions: count("transactions"),
      }).toEqual({
        branches: 8,
        customers: 120,
        accounts: 200,
        transactions: 480,
      });
    } finally {
      db.close();
    }
  });

  it("runs every gold SQL, and every walkthrough reaches result_matches with all needed columns seen", async () => {
    const all = { ...bank, tasks: generateDemo().questions.length };
    for (let task = 0; task < all.tasks; task++) {
      const calls = await sqlEnv.walkthrough!(all, task);
      expect(calls?.at(-1)?.name).toBe("query");
      const env = await sqlEnv.create(all, task, 0);
      await env.reset();
      let last: StepResult | undefined;
      for (const c of calls!) last = await env.step(c);
      expect(last!.text).not.toMatch(/^Error|^Refused/);
      expect(last!.signals.columns_seen_fraction, `task ${task}`).toBe(1);
      expect(await env.outcome(), `task ${task}`).toEqual({ result_matches: true, success: true });
      await env.close();
    }
  });
});

describe("sql env: data files", () => {
  function dataDir() {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-sql-test-"));
    const dbFile = path.join(dir, "shop.sqlite");
    const db = new Database(dbFile);
    db.exec(
      "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, price REAL); INSERT INTO items VALUES (1, 'pen', 1.5), (2, 'book', 12.25), (3, 'lamp', 30.1);",
    );
    db.close();
    const questions = [
      { question: "How many items are there?", sql: "SELECT COUNT(*) FROM items" },
      { question: "What is the total price of all items?", expected: [[43.85]] },
      { question: "List the item names sorted by price.", sql: "SELECT name FROM items ORDER BY price" },
    ];
    writeFileSync(path.join(dir, "questions.jsonl"), questions.map((q) => JSON.stringify(q)).join("\n") + "\n");
    const file = (name: string) => ({ path: name, sha256: sha(readFileSync(path.join(dir, name))) });
    const env: SqlEnv = { ...bank, tasks: 3, database: file("shop.sqlite"), questions: file("questions.jsonl") };
    return { dir, env };
  }

  it("serves questions from the files, relative to the root", async () => {
    const { dir, env } = dataDir();
    const kind = createSqlEnv({ root: dir });
    expect(await kind.walkthrough!(env, 0)).toEqual([
      call("describe_table", { table: "items" }),
      call("query", { sql: "SELECT COUNT(*) FROM items" }),
    ]);
    expect(await kind.walkthrough!(env, 1)).toBeUndefined();
    const a = await start(env, 1, kind);
    expect((await a.step(call("list_tables"))).text).toBe("Tables: items");
    await a.step(call("query", { sql: "SELECT SUM(price) FROM items" }));
    expect((await a.outcome()).result_matches).toBe(true);
    // "sorted" in the wording makes the order count.
    const b = await start(env, 2, kind);
    await b.step(call("query", { sql: "SELECT name FROM items ORDER BY price DESC" }));
    expect((await b.outcome()).result_matches).toBe(false);
    // Writes stay within the episode.
    const w = await start({ ...env, read_only: false }, 0, kind);
    await w.step(call("execute", { sql: "DELETE FROM items" }));
    const r = await start(env, 0, kind);
    expect((await r.step(call("query", { sql: "SELECT COUNT(*) FROM items" }))).text).toContain("\n3\n");
    expect(kind.vocabulary(env)).toContain("items");
  });

  // Without a root, data files are refused and ARL_SPEC_DIR is not read: test/confinement/data-root.test.ts.

  it("refuses files whose sha256 differs from the plan's, and missing files", async () => {
    const { dir, env } = dataDir();
    const kind = createSqlEnv({ root: dir });
    await expect(kind.create({ ...env, database: { ...env.database!, sha256: "0".repeat(64) } }, 0, 0)).rejects.toThrow(
      /has sha256 [0-9a-f]{64}, but the plan was compiled against 0{64}/,
    );
    await expect(
      kind.create({ ...env, questions: { ...env.questions!, sha256: "1".repeat(64) } }, 0, 0),
    ).rejects.toBeInstanceOf(EnvError);
    await expect(kind.create({ ...env, tasks: 4 }, 0, 0)).rejects.toThrow(
      /has 3 questions, but the plan declares tasks: 4/,
    );
    // A file changed after compiling is refused too.
    await start(env, 0, kind);
    writeFileSync(path.join(dir, "questions.jsonl"), '{"question": "changed?", "sql": "SELECT 1"}\n');
    await expect(kind.create(env, 0, 0)).rejects.toThrow(/refusing to run on different data/);
    await expect(kind.create({ ...env, database: { ...env.database!, path: "missing.sqlite" } }, 0, 0)).rejects.toThrow(
      /does not exist/,
    );
    await expect(kind.create({ ...env, questions: null }, 0, 0)).rejects.toThrow(/needs its questions file/);
  });

  it("rejects a malformed questions file", async () => {
    const { dir, env } = dataDir();
    writeFileSync(path.join(dir, "questions.jsonl"), '{"question": "no answer"}\n');
    const broken = {
      ...env,
      tasks: 1,
      questions: { path: "questions.jsonl", sha256: sha(readFileSync(path.join(dir, "questions.jsonl"))) },
    };
    await expect(createSqlEnv({ root: dir }).create(broken, 0, 0)).rejects.toThrow(
      /questions.jsonl:1: a question needs "sql"/,
    );
  });
});

describe("sql env: text helpers", () => {
  it("scans identifiers outside strings and comments", () => {
    expect(scanSql("-- c\n with x as (select \"Name\", 'lit' from [t1] /* y */) select `a`").identifiers).toEqual([
      "with",
      "x",
      "as",
      "select",
      "name",
      "from",
      "t1",
      "select",
      "a",
    ]);
    expect(scanSql("  /* c */ DELETE FROM t").first).toBe("DELETE");
    expect(scanSql("").first).toBe("");
  });

  it("compares tables as multisets with a float tolerance and any column order", () => {
    expect(
      tablesMatch(
        [
          [1, "a"],
          [2, "b"],
        ],
        [
          [2, "b"],
          [1, "a"],
        ],
        false,
      ),
    ).toBe(true);
    expect(
      tablesMatch(
        [
          [1, "a"],
          [2, "b"],
        ],
        [
          [2, "b"],
          [1, "a"],
        ],
        true,
      ),
    ).toBe(false);
    expect(tablesMatch([[0.1 + 0.2]], [[0.3]], false)).toBe(true);
    expect(tablesMatch([[0.3001]], [[0.3]], false)).toBe(false);
    expect(tablesMatch([["a", 1]], [[1, "a"]], false)).toBe(true);
    expect(tablesMatch([[1], [1], [2]], [[1], [2], [2]], false)).toBe(false);
    expect(tablesMatch([["1"]], [[1]], false)).toBe(false);
    expect(tablesMatch([[null]], [[null]], false)).toBe(true);
    expect(tablesMatch([[1, 2]], [[1]], false)).toBe(false);
    expect(tablesMatch([], [], false)).toBe(true);
  });

  it("renders a small text table", () => {
    expect(
      textTable(
        ["n", "name"],
        [
          [1, "pen"],
          [22.5, null],
        ],
        10,
        2,
      ),
    ).toBe("n    | name\n-----+-----\n1    | pen\n22.5 | NULL\n(2 rows)");
  });
});
