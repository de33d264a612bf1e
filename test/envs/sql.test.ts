// The built-in sql env: episodes over the bank_demo database (queries, answers, scoring, limits,
// isolation, failures) and the constraint blocks the harness executes. The bundled data, data
// files and the text helpers are in sql-data.test.ts.
import { describe, expect, it } from "vitest";
import { generateDemo } from "../../src/envs/worlds/sql/demo.js";
import { sqlEnv, type SqlEnv } from "../../src/envs/worlds/sql/index.js";
import { envKinds } from "../../src/envs/registry.js";
import { EnvError } from "../../src/contracts/env.js";
import type { Plan } from "../../src/plan/schema.js";
import { runEpisode } from "../../src/episode/harness.js";
import { ToolCallValidator } from "../../src/contracts/tool-calls.js";
import { ScriptedPolicy } from "../helpers/scripted.js";
import { call, plan, bank, useBankEnv, start, open } from "../helpers/sql-env.js";

const toolCallText = (name: string, args: object = {}) =>
  `<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`;

useBankEnv();

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
