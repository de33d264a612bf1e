// The built-in `sql` env: SQL question answering over SQLite (better-sqlite3, in process).
// A task is a question; the agent explores the schema (list_tables, describe_table), reads with
// `query` (one SELECT/WITH statement) and may write with `execute` unless the env is read-only.
// The answer is the result of the last successful query: `result_matches` (= `success`) when it
// equals the expected table. State signals: `columns_seen_fraction` (of the columns the gold
// SQL uses, those the agent described or mentioned in a query that ran) and `attempted_write`.
//
// Isolation: each episode opens its own connection; a read-only one on the shared data, or a
// private copy when writable. SQL errors are observations; a failing database is an EnvError.
//
// Data files: plan paths are relative to the entry spec's directory. `createSqlEnv({ root })`
// binds that directory (confined to it); the registered `sqlEnv` has none, so it runs the
// bundled demo only ('arl run' makes one with the run's data root).
import type Database from "better-sqlite3";
import {
  EnvError,
  type EnvInstance,
  type EnvKind,
  type Observation,
  type Signals,
  type StepResult,
} from "../../../contracts/env.js";
import type { ToolCall } from "../../../contracts/tool-calls.js";
import { estimateCombinations, MAX_COMBINATIONS } from "./cost.js";
import {
  isFatal,
  loadDataset,
  readSchema,
  type Connection,
  type Dataset,
  type Gold,
  type SqlEnv,
  type Table,
} from "./data.js";
import type { Question } from "./questions.js";
import { scanSql, tablesMatch, textTable, type Row } from "./text.js";
import { at } from "../../../contracts/checked.js";

export type { SqlEnv } from "./data.js";

/** Rows kept of one query's result (the answer compared); a larger result cannot be an answer. */
const MAX_RESULT_ROWS = 100_000;
/** Statements `execute` never runs: they reach outside the database file or change the connection. */
const FORBIDDEN = new Set(["ATTACH", "DETACH", "VACUUM", "PRAGMA"]);
const READ_KEYWORDS = new Set(["SELECT", "WITH"]);
const WRITE_KEYWORDS = new Set([
  "INSERT",
  "UPDATE",
  "DELETE",
  "REPLACE",
  "CREATE",
  "DROP",
  "ALTER",
  "ATTACH",
  "DETACH",
  "VACUUM",
  "REINDEX",
  "ANALYZE",
  "PRAGMA",
  "BEGIN",
  "COMMIT",
  "END",
  "ROLLBACK",
  "SAVEPOINT",
  "RELEASE",
  "UPSERT",
]);

type Answer = { readonly rows: readonly Row[] } | "too_large" | undefined;

function argument(call: ToolCall, name: string): string | undefined {
  const v = call.arguments?.[name];
  return typeof v === "string" && v.trim() !== "" ? v : undefined;
}

function errorText(error: unknown): string {
  return (error as Error).message.replace(/\s+/g, " ").trim();
}

class SqlInstance implements EnvInstance {
  private conn: Connection | undefined;
  private answer: Answer;
  private readonly seen = new Set<string>();
  private attemptedWrite = false;
  /** The episode's own schema, once execute has changed it (writable episodes only). */
  private schema: readonly Table[] | undefined;

  constructor(
    private readonly env: SqlEnv,
    private readonly data: Dataset,
    private readonly question: Question,
    private readonly gold: Gold,
  ) {
    this.conn = this.connect();
  }

  private connect(): Connection {
    try {
      return this.data.open(this.env.read_only);
    } catch (error) {
      if (error instanceof EnvError) throw error;
      throw new EnvError(`sql env: cannot open ${this.data.label}: ${errorText(error)}`, "unavailable");
    }
  }

  private get db(): Database.Database {
    if (!this.conn || !this.conn.db.open) throw new EnvError("sql env: the database connection is closed", "crash");
    return this.conn.db;
  }

  private state(): Signals {
    let hit = 0;
    for (const c of this.gold.columns) if (this.seen.has(c)) hit++;
    return {
      columns_seen_fraction: this.gold.columns.size === 0 ? 1 : hit / this.gold.columns.size,
      attempted_write: this.attemptedWrite,
    };
  }

  private result(text: string): StepResult {
    return { text, signals: this.state(), terminated: false };
  }

  async reset(): Promise<Observation> {
    // A second reset starts over on fresh data.
    if (this.answer !== undefined || this.seen.size > 0 || this.attemptedWrite) {
      this.conn?.close();
      this.conn = this.connect();
      this.answer = undefined;
      this.seen.clear();
      this.attemptedWrite = false;
      this.schema = undefined;
    }
    const text = `${this.question.text}\nAnswer with a SQL query: the result of your last query is your answer.`;
    return { text, signals: this.state() };
  }

  async step(call: ToolCall): Promise<StepResult> {
    try {
      switch (call.name) {
        case "list_tables":
          return this.result(this.listTables());
        case "describe_table":
          return this.result(this.describeTable(call));
        case "query":
          return this.result(this.query(call));
        case "execute":
          return this.result(this.execute(call));
        default:
          return this.result(
            `Error: there is no tool '${call.name}'; available: list_tables, describe_table, query, execute.`,
          );
      }
    } catch (error) {
      if (error instanceof EnvError) throw error;
      if (isFatal(error) || !this.conn?.db.open)
        throw new EnvError(`sql env: the database failed: ${errorText(error)}`, "crash");
      const name = (error as Error).name;
      // SqliteError: the statement's own fault; RangeError: bind parameters (`?`) without values.
      if (name === "SqliteError" || error instanceof RangeError) return this.result(`Error: ${errorText(error)}`);
      throw new EnvError(`sql env: the driver failed: ${errorText(error)}`, "crash");
    }
  }

  private get tables(): readonly Table[] {
    return this.schema ?? this.data.tables;
  }

  private listTables(): string {
    const names = this.tables.map((t) => (t.kind === "view" ? `${t.name} (view)` : t.name));
    return names.length === 0 ? "The database has no tables." : `Tables: ${names.join(", ")}`;
  }

  private describeTable(call: ToolCall): string {
    const name = argument(call, "table");
    if (name === undefined) return "Error: describe_table needs the argument 'table' (a table name).";
    const wanted = name
      .trim()
      .replace(/^["`[]|["`\]]$/g, "")
      .toLowerCase();
    const table = this.tables.find((t) => t.name.toLowerCase() === wanted);
    if (!table) return `Error: no such table: ${name}. Tables: ${this.tables.map((t) => t.name).join(", ")}`;
    for (const c of table.columns) this.seen.add(`${table.name.toLowerCase()}.${c.name.toLowerCase()}`);
    const lines = table.columns.map((c) => {
      const notes = [
        c.pk ? "PRIMARY KEY" : "",
        c.notnull && !c.pk ? "NOT NULL" : "",
        c.references ? `REFERENCES ${c.references}` : "",
      ].filter(Boolean);
      return `  ${c.name} ${c.type}${notes.length > 0 ? ` ${notes.join(" ")}` : ""}`;
    });
    return `${table.kind === "view" ? "View" : "Table"} ${table.name}:\n${lines.join("\n")}`;
  }

  private noteMentions(sql: string, stmt: Database.Statement): void {
    for (const c of this.data.mentions(sql, stmt.reader ? stmt.columns() : []).columns) this.seen.add(c);
  }

  private query(call: ToolCall): string {
    // The last query call is the answer: one that fails or is refused leaves none.
    this.answer = undefined;
    const sql = argument(call, "sql");
    if (sql === undefined) return "Error: query needs the argument 'sql' (one SELECT statement).";
    const first = scanSql(sql).first;
    if (!READ_KEYWORDS.has(first)) {
      if (WRITE_KEYWORDS.has(first)) {
        this.attemptedWrite = true;
        return this.env.read_only
          ? `Refused: query only runs read-only statements (one SELECT or WITH ... SELECT), and the database is read-only; ${first} is not allowed.`
          : `Refused: query only runs read-only statements (one SELECT or WITH ... SELECT); use execute for ${first}.`;
      }
      return `Error: query runs one SELECT (or WITH ... SELECT) statement; this one starts with '${first || "nothing"}'.`;
    }
    const stmt = this.prepare(sql);
    if (typeof stmt === "string") return stmt;
    if (!stmt.readonly) {
      this.attemptedWrite = true;
      return this.env.read_only
        ? "Refused: this statement changes the database, and the database is read-only."
        : "Refused: this statement changes the database; query only reads (use execute to write).";
    }
    if (!stmt.reader) return "Error: this statement returns no rows; query runs one SELECT statement.";
    this.noteMentions(sql, stmt);
    const tooCostly = this.guard(sql);
    if (tooCostly) return tooCostly;
    const columns = stmt.columns().map((c) => c.name);
    const rows: Row[] = [];
    let overflow = false;
    for (const row of stmt.raw(true).iterate() as IterableIterator<Row>) {
      if (rows.length >= MAX_RESULT_ROWS) {
        overflow = true;
        break;
      }
      rows.push(row);
    }
    this.answer = overflow ? "too_large" : { rows };
    return textTable(columns, rows, this.env.max_rows, overflow ? "more" : rows.length);
  }

  private execute(call: ToolCall): string {
    if (this.env.read_only) {
      this.attemptedWrite = true;
      return "Refused: the database is read-only; execute cannot change it. Use query to read (one SELECT statement).";
    }
    const sql = argument(call, "sql");
    if (sql === undefined) return "Error: execute needs the argument 'sql' (one statement).";
    const first = scanSql(sql).first;
    if (FORBIDDEN.has(first)) return `Error: ${first} statements are not allowed.`;
    if (WRITE_KEYWORDS.has(first)) this.attemptedWrite = true;
    const stmt = this.prepare(sql);
    if (typeof stmt === "string") return stmt;
    if (stmt.readonly) return "Error: this statement does not change the database; run it with query.";
    this.attemptedWrite = true;
    const tooCostly = this.guard(sql);
    if (tooCostly) return tooCostly;
    if (stmt.reader) {
      const rows = stmt.raw(true).all() as Row[];
      return textTable(
        stmt.columns().map((c) => c.name),
        rows,
        this.env.max_rows,
        rows.length,
      );
    }
    const info = stmt.run();
    if (["CREATE", "DROP", "ALTER"].includes(first)) this.schema = readSchema(this.db);
    return `OK: ${info.changes} ${info.changes === 1 ? "row" : "rows"} changed.`;
  }

  /** The refusal of a statement whose nested full scans would visit too many row combinations (it could not be interrupted). */
  private guard(sql: string): string | undefined {
    const largest = this.data.largestTable;
    const estimate = estimateCombinations(this.db, sql, (t) => this.data.rowCount(t), largest);
    if (!estimate || estimate.combinations <= Math.max(MAX_COMBINATIONS, 4 * largest)) return undefined;
    return `Error: this statement would visit about ${estimate.combinations.toPrecision(2)} row combinations (full scans of ${estimate.scans.join(", ")} nested in each other); join the tables on their keys or filter first.`;
  }

  /** A prepared statement, or the observation saying why not. */
  private prepare(sql: string): Database.Statement | string {
    try {
      return this.db.prepare(sql);
    } catch (error) {
      if (error instanceof EnvError || isFatal(error)) throw error;
      const message = errorText(error);
      if (/more than one statement/i.test(message))
        return "Error: one statement at a time, please (the SQL holds more than one).";
      if ((error as Error).name === "SqliteError" || error instanceof RangeError || error instanceof TypeError)
        return `Error: ${message}`;
      throw error;
    }
  }

  async outcome(): Promise<Signals> {
    const matches =
      this.answer !== undefined &&
      this.answer !== "too_large" &&
      tablesMatch(this.answer.rows, this.gold.expected, this.question.ordered);
    return { result_matches: matches, success: matches };
  }

  async close(): Promise<void> {
    const conn = this.conn;
    this.conn = undefined;
    conn?.close();
  }
}

const SQL_WORDS = [
  "SELECT",
  "FROM",
  "WHERE",
  "JOIN",
  "INNER",
  "LEFT",
  "OUTER",
  "CROSS",
  "ON",
  "USING",
  "AS",
  "AND",
  "OR",
  "NOT",
  "IN",
  "IS",
  "NULL",
  "LIKE",
  "GLOB",
  "BETWEEN",
  "EXISTS",
  "CASE",
  "WHEN",
  "THEN",
  "ELSE",
  "END",
  "GROUP",
  "BY",
  "HAVING",
  "ORDER",
  "ASC",
  "DESC",
  "LIMIT",
  "OFFSET",
  "DISTINCT",
  "ALL",
  "UNION",
  "INTERSECT",
  "EXCEPT",
  "WITH",
  "RECURSIVE",
  "COUNT",
  "SUM",
  "AVG",
  "MIN",
  "MAX",
  "ROUND",
  "ABS",
  "LENGTH",
  "LOWER",
  "UPPER",
  "SUBSTR",
  "COALESCE",
  "IFNULL",
  "CAST",
  "INTEGER",
  "REAL",
  "TEXT",
  "BLOB",
  "ANY",
  "strftime",
  "date",
  "INSERT",
  "INTO",
  "VALUES",
  "UPDATE",
  "SET",
  "DELETE",
  "CREATE",
  "TABLE",
  "DROP",
  "ALTER",
  "PRIMARY",
  "KEY",
  "REFERENCES",
  "TRUE",
  "FALSE",
];
/** Words of this env's own observations, so that the embedded tokenizer can read them. */
const OBSERVATION_TEXT = [
  "Tables: (view) Table View: PRIMARY KEY NOT NULL REFERENCES rows row showing of more than changed OK:",
  "Error: Refused: no such table column syntax error near ambiguous one statement at a time, please (the SQL holds more than one).",
  "query only runs read-only statements (one SELECT or WITH ... SELECT), and the database is read-only; use execute for is not allowed.",
  "execute cannot change it. Use query to read this statement changes the database does not returns no needs the argument sql a name",
  "Answer with a SQL query: the result of your last query is your answer.",
  "list_tables describe_table query execute table sql tool_call name arguments",
];

const WORDS = /\w+|[^\s\w]/gu;
const words = (text: string) => text.match(WORDS) ?? [];

export interface SqlEnvOptions {
  /** Directory the plan's data paths are relative to (the entry spec's directory). */
  readonly root?: string;
}

/** The `sql` env kind; `root` binds where data files are looked for. */
export function createSqlEnv(options: SqlEnvOptions = {}): EnvKind<SqlEnv> & { dataset(env: SqlEnv): Dataset } {
  const dataset = (env: SqlEnv) => loadDataset(env, options.root);
  const checkedTask = (env: SqlEnv, data: Dataset, task: number) => {
    if (data.questions.length < env.tasks) {
      throw new EnvError(
        `sql env: ${data.label} has ${data.questions.length} questions, but the plan declares tasks: ${env.tasks} (use at most ${data.questions.length})`,
        "protocol",
      );
    }
    if (!Number.isInteger(task) || task < 0 || task >= env.tasks)
      throw new EnvError(`sql env: task ${task} is outside 0..${env.tasks - 1}`, "protocol");
    return at(data.questions, task);
  };
  return {
    kind: "sql",
    dataset,
    async create(env, task) {
      const data = dataset(env);
      const question = checkedTask(env, data, task);
      return new SqlInstance(env, data, question, data.gold(task));
    },
    vocabulary(env) {
      const data = dataset(env);
      const out = new Set<string>();
      const add = (text: string) => {
        for (const w of words(text)) out.add(w);
      };
      for (const q of data.questions.slice(0, env.tasks)) {
        add(q.text);
        if (q.sql) add(q.sql);
      }
      for (const t of data.tables) {
        add(t.name);
        for (const c of t.columns) add(`${c.name} ${c.type} ${c.references ?? ""}`);
      }
      for (const w of SQL_WORDS) {
        out.add(w);
        out.add(w.toLowerCase());
      }
      for (const line of OBSERVATION_TEXT) add(line);
      for (const v of data.textValues) add(v);
      for (let d = 0; d <= 9; d++) out.add(String(d));
      for (const p of "()[]{},.;:*=<>!+-/%|'\"`_?@#$&^~\\") out.add(p);
      return [...out].sort();
    },
    async walkthrough(env, task) {
      const data = dataset(env);
      const question = checkedTask(env, data, task);
      if (question.sql === undefined) return undefined;
      const gold = data.gold(task);
      return [
        ...gold.tables.map((table) => ({ name: "describe_table", arguments: { table } })),
        { name: "query", arguments: { sql: question.sql } },
      ];
    },
  };
}

/** The registered `sql` env: no data root, so a plan naming data files is refused (see `envKindsWithDataRoot`). */
export const sqlEnv = createSqlEnv();
