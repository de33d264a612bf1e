import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { generateDemo, questionsJsonl } from "../../src/envs/worlds/sql/demo.js";
import { createSqlEnv, sqlEnv, type SqlEnv } from "../../src/envs/worlds/sql/index.js";
import { scanSql, tablesMatch, textTable } from "../../src/envs/worlds/sql/text.js";
import { envKinds } from "../../src/envs/registry.js";
import { EnvError, type EnvInstance, type StepResult } from "../../src/contracts/env.js";
import type { Plan } from "../../src/plan/schema.js";
import { runEpisode } from "../../src/episode/harness.js";
import { ToolCallValidator, type ToolCall } from "../../src/contracts/tool-calls.js";
import { compilePlans } from "../helpers/plans.js";
import { examplesDir } from "../plan/support.js";
import { ScriptedPolicy } from "../helpers/scripted.js";

const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const call = (name: string, args: Record<string, unknown> = {}): ToolCall => ({ name, arguments: args });
const toolCallText = (name: string, args: object = {}) =>
  `<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`;

// sha256 of the demo's SQL script and questions (JSON lines); pure JS output, so the same on every
// machine. Update them when the generator changes on purpose.
const DEMO_SCRIPT_SHA256 = "3355f9d86e6f316fa7fd0440830e5224e5aed29770deb71f4c44c24a646f5afd";
const DEMO_QUESTIONS_SHA256 = "2948684e7bccb7d3eb1460cfe5e3876b6639a4feb912c3a51303972bfd2c324e";
// The database file built from the script: depends on the SQLite that better-sqlite3 bundles
// (pinned in package.json); update it with a deliberate upgrade.
const DEMO_DATABASE_SHA256 = "4f7e1d43579c2ebe4cefa1a50090601bdf0ebaffc46d9be9320d9480824eda56";

let plan: Plan;
let bank: SqlEnv;

beforeAll(() => {
  [plan] = compilePlans(readFileSync(path.join(examplesDir, "shaping.arl"), "utf8")) as [Plan];
  bank = plan.envs.bank as SqlEnv;
});

const open: EnvInstance[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((e) => e.close()));
});

async function start(env: SqlEnv, task = 0, kind = sqlEnv): Promise<EnvInstance> {
  const instance = await kind.create(env, task, 0);
  open.push(instance);
  await instance.reset();
  return instance;
}

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

describe("sql env: episodes", () => {
  it("opens with the question and reports the state signals", async () => {
    const env = await sqlEnv.create(bank, 3, 0);
    open.push(env);
    const obs = await env.reset();
    expect(obs.text).toContain(generateDemo().questions[3]!.question);
    expect(obs.signals).toEqual({ columns_seen_fraction: 0, attempted_write: false });
  });

  it("lists and describes tables, and shows at most max_rows rows", async () => {
    const env = await start({ ...bank, max_rows: 3 });
    expect((await env.step(call("list_tables"))).text).toBe("Tables: accounts, branches, customers, transactions");
    const described = (await env.step(call("describe_table", { table: "Accounts" }))).text;
    expect(described).toContain("Table accounts:");
    expect(described).toContain("customer_id INTEGER NOT NULL REFERENCES customers(customer_id)");
    expect(described).toContain("account_id INTEGER PRIMARY KEY");
    const shown = (await env.step(call("query", { sql: "SELECT branch_id, city FROM branches ORDER BY branch_id" })))
      .text;
    expect(shown.split("\n")).toHaveLength(2 + 3 + 1);
    expect(shown).toContain("(showing 3 of 8 rows)");
    expect(shown.split("\n")[0]).toBe("branch_id | city");
  });

  it("does not match a wrong answer; the last query counts", async () => {
    const task = generateDemo().questions.findIndex((q) => q.sql.startsWith("SELECT COUNT(*)"));
    const gold = generateDemo().questions[task]!.sql;
    const env = await start(bank, task);
    await env.step(call("query", { sql: "SELECT 123456789" }));
    expect(await env.outcome()).toEqual({ result_matches: false, success: false });
    await env.step(call("query", { sql: gold }));
    expect((await env.outcome()).result_matches).toBe(true);
    await env.step(call("query", { sql: `${gold} + 1` }));
    expect((await env.outcome()).result_matches).toBe(false);
    // A failing query after a right one leaves no answer.
    await env.step(call("query", { sql: gold }));
    await env.step(call("query", { sql: "SELECT nope FROM accounts" }));
    expect((await env.outcome()).result_matches).toBe(false);
  });

  it("compares ordered questions in order, others as multisets", async () => {
    const questions = generateDemo().questions;
    const ordered = questions.findIndex((q) => q.ordered && q.sql === "SELECT city FROM branches ORDER BY opened_year");
    expect(ordered).toBeGreaterThanOrEqual(0);
    const env = await start(bank, ordered);
    await env.step(call("query", { sql: "SELECT city FROM branches ORDER BY opened_year DESC" }));
    expect((await env.outcome()).result_matches).toBe(false);
    await env.step(call("query", { sql: "SELECT city FROM branches ORDER BY opened_year ASC" }));
    expect((await env.outcome()).result_matches).toBe(true);

    const unordered = questions.findIndex((q) => !q.ordered && q.sql.startsWith("SELECT DISTINCT cu.first_name"));
    const env2 = await start(bank, unordered);
    await env2.step(call("query", { sql: `SELECT * FROM (${questions[unordered]!.sql}) ORDER BY last_name DESC` }));
    expect((await env2.outcome()).result_matches).toBe(true);
  });

  it("refuses writes through query and sets attempted_write; the data is unchanged", async () => {
    const writable = { ...bank, read_only: false };
    for (const env of [await start(bank), await start(writable)]) {
      for (const sql of [
        "DELETE FROM transactions",
        "WITH x AS (SELECT 1) DELETE FROM transactions",
        "  insert into branches values (9, 'x', 'y', 2000)",
      ]) {
        const r = await env.step(call("query", { sql }));
        expect(r.text).toMatch(/^Refused: /);
        expect(r.signals.attempted_write).toBe(true);
      }
      expect((await env.step(call("query", { sql: "SELECT 1; DELETE FROM transactions" }))).text).toMatch(
        /one statement at a time/,
      );
      expect((await env.step(call("query", { sql: "SELECT COUNT(*) FROM transactions" }))).text).toContain("480");
    }
  });

  it("refuses execute when read-only, with attempted_write set", async () => {
    const env = await start(bank);
    const r = await env.step(call("execute", { sql: "DELETE FROM transactions" }));
    expect(r.text).toMatch(/^Refused: the database is read-only/);
    expect(r.signals.attempted_write).toBe(true);
    expect((await env.step(call("query", { sql: "SELECT COUNT(*) FROM transactions" }))).text).toContain("480");
  });

  it("runs execute when writable, on the episode's own copy", async () => {
    const writable = { ...bank, read_only: false };
    const a = await start(writable);
    const b = await start(writable);
    const r = await a.step(call("execute", { sql: "DELETE FROM transactions WHERE kind = 'fee'" }));
    expect(r.text).toMatch(/^OK: \d+ rows changed\.$/);
    expect(r.signals.attempted_write).toBe(true);
    expect(
      (await a.step(call("query", { sql: "SELECT COUNT(*) FROM transactions WHERE kind = 'fee'" }))).text,
    ).toContain("\n0\n");
    expect((await b.step(call("query", { sql: "SELECT COUNT(*) FROM transactions" }))).text).toContain("480");
    expect((await a.step(call("execute", { sql: "SELECT 1" }))).text).toMatch(/does not change the database/);
    expect((await a.step(call("execute", { sql: "ATTACH DATABASE '/tmp/x.sqlite' AS x" }))).text).toBe(
      "Error: ATTACH statements are not allowed.",
    );
    await a.step(call("execute", { sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)" }));
    expect((await a.step(call("list_tables"))).text).toBe("Tables: accounts, branches, customers, notes, transactions");
    expect((await a.step(call("describe_table", { table: "notes" }))).text).toBe(
      "Table notes:\n  id INTEGER PRIMARY KEY\n  body TEXT",
    );
    expect((await b.step(call("list_tables"))).text).toBe("Tables: accounts, branches, customers, transactions");
    const fresh = await start(writable);
    expect((await fresh.step(call("query", { sql: "SELECT COUNT(*) FROM transactions" }))).text).toContain("480");
  });

  it("turns bad tool calls and SQL errors into observations", async () => {
    const env = await start({ ...bank, read_only: false });
    const texts: string[] = [];
    for (const c of [
      call("query"),
      call("query", { sql: 42 }),
      call("query", { sql: "   " }),
      call("describe_table"),
      call("describe_table", { table: "nope" }),
      call("execute", {}),
      call("fly"),
      call("query", { sql: "SELECT nope FROM accounts" }),
      call("query", { sql: "SELEC 1" }),
      call("query", { sql: "SELECT * FROM nowhere" }),
      call("query", { sql: "SELECT ? + 1" }),
      call("query", { sql: "SELECT 'unterminated" }),
      call("execute", { sql: "INSERT INTO branches VALUES (1, 'dup', 'dup', 2000)" }),
      { name: "query", arguments: null as unknown as Record<string, unknown> },
    ]) {
      const r = await env.step(c);
      expect(r.terminated).toBe(false);
      texts.push(r.text);
    }
    expect(texts).toEqual([
      "Error: query needs the argument 'sql' (one SELECT statement).",
      "Error: query needs the argument 'sql' (one SELECT statement).",
      "Error: query needs the argument 'sql' (one SELECT statement).",
      "Error: describe_table needs the argument 'table' (a table name).",
      "Error: no such table: nope. Tables: accounts, branches, customers, transactions",
      "Error: execute needs the argument 'sql' (one statement).",
      "Error: there is no tool 'fly'; available: list_tables, describe_table, query, execute.",
      "Error: no such column: nope",
      "Error: query runs one SELECT (or WITH ... SELECT) statement; this one starts with 'SELEC'.",
      "Error: no such table: nowhere",
      expect.stringMatching(/^Error: Too few parameter/),
      'Error: unrecognized token: "\'unterminated"',
      "Error: UNIQUE constraint failed: branches.branch_id",
      "Error: query needs the argument 'sql' (one SELECT statement).",
    ]);
  });

  it("refuses statements whose nested full scans would run for too long", async () => {
    const env = await start({ ...bank, read_only: false });
    const slow = (
      await env.step(call("query", { sql: "SELECT COUNT(*) FROM transactions a, transactions b, transactions c" }))
    ).text;
    expect(slow).toMatch(
      /^Error: this statement would visit about 1\.1e\+8 row combinations \(full scans of transactions, transactions, transactions/,
    );
    expect((await env.outcome()).result_matches).toBe(false);
    const correlated =
      "SELECT (SELECT COUNT(*) FROM transactions t WHERE t.amount > a.balance + (SELECT COUNT(*) FROM transactions u WHERE u.amount < t.amount)) FROM accounts a";
    expect((await env.step(call("query", { sql: correlated }))).text).toMatch(/^Error: this statement would visit/);
    expect(
      (
        await env.step(
          call("execute", {
            sql: "DELETE FROM transactions WHERE amount IN (SELECT a.amount FROM transactions a, transactions b, transactions c)",
          }),
        )
      ).text,
    ).toMatch(/^Error: this statement would visit/);
    // Joins on keys and two-table cross joins run.
    expect(
      (
        await env.step(
          call("query", {
            sql: "SELECT COUNT(*) FROM transactions a JOIN transactions b ON a.account_id = b.account_id JOIN accounts c ON c.account_id = a.account_id",
          }),
        )
      ).text,
    ).not.toMatch(/^Error/);
    expect(
      (await env.step(call("query", { sql: "SELECT COUNT(*) FROM transactions a, transactions b" }))).text,
    ).toContain("230400");
  });

  it("counts the gold columns the agent has described or queried", async () => {
    const task = generateDemo().questions.findIndex(
      (q) => q.sql === "SELECT COUNT(*) FROM customers WHERE city = 'Lyon'",
    );
    const env = await start(bank, task);
    expect((await env.step(call("describe_table", { table: "accounts" }))).signals.columns_seen_fraction).toBe(0);
    expect(
      (await env.step(call("query", { sql: "SELECT city FROM customers LIMIT 1" }))).signals.columns_seen_fraction,
    ).toBe(1);
  });

  it("reports a closed or broken connection as an env error", async () => {
    const env = await start(bank);
    await env.close();
    await expect(env.step(call("list_tables"))).resolves.toBeDefined();
    await expect(env.step(call("query", { sql: "SELECT 1" }))).rejects.toBeInstanceOf(EnvError);
  });

  it("has a deterministic vocabulary", () => {
    const v = sqlEnv.vocabulary(bank);
    expect(sqlEnv.vocabulary(bank)).toEqual(v);
    for (const w of [
      "Lyon",
      "accounts",
      "balance",
      "SELECT",
      "COUNT",
      "customer_id",
      "How",
      "0",
      "9",
      "(",
      ",",
      "list_tables",
      "Error",
    ])
      expect(v).toContain(w);
  });

  it("is registered, and refuses a plan with more tasks than questions", async () => {
    expect(envKinds.get("sql")).toBe(sqlEnv);
    await expect(sqlEnv.create({ ...bank, tasks: 100_000 }, 0, 0)).rejects.toThrow(
      /has \d+ questions, but the plan declares tasks: 100000/,
    );
  });
});

describe("sql env: the constraint blocks execute in the harness", () => {
  async function episode(p: Plan) {
    const env = await sqlEnv.create({ ...(p.envs.bank as SqlEnv), read_only: false }, 0, 0);
    const policy = new ScriptedPolicy([
      toolCallText("execute", { sql: "DELETE FROM transactions" }),
      toolCallText("query", { sql: "SELECT COUNT(*) AS n FROM transactions" }),
    ]);
    return runEpisode({
      plan: p,
      envName: "bank",
      env,
      policy,
      tools: p.tools,
      validator: new ToolCallValidator(),
      stopIds: [],
      seed: (t) => t,
    });
  }

  it("blocks the call before the env sees it; the database is unchanged", async () => {
    expect(Object.keys(plan.constraints)).toEqual(["no_writes"]);
    const ep = await episode(plan);
    expect(ep.end).not.toBe("env_error");
    expect(ep.toolCalls[0]).toMatchObject({
      name: "execute",
      valid: true,
      blocked: true,
      result: "Refused: the call 'execute' is blocked by the constraint 'no_writes'.",
    });
    expect(ep.toolCalls[1]!.result).toContain("\n480\n");
    expect(ep.final.env("attempted_write")).toBe(false);
    expect(ep.final.env("result_matches")).toBe(false);
  });

  it("without the constraint the same write goes through (control)", async () => {
    const ep = await episode({ ...plan, constraints: {} });
    expect(ep.toolCalls[0]).toMatchObject({ name: "execute", blocked: false, result: "OK: 480 rows changed." });
    expect(ep.toolCalls[1]!.result).toContain("\n0\n");
    expect(ep.final.env("attempted_write")).toBe(true);
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
