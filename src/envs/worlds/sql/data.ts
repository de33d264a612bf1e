// Where an sql env's database and questions come from: the generated demo, or the plan's data
// files (located and checked against the plan's sha256 by data-files.ts, questions parsed by
// questions.ts). A dataset is loaded once per process (one read-only connection kept for the
// schema and the gold answers); each episode opens its own connection.
import Database from "better-sqlite3";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { EnvError } from "../../../contracts/env.js";
import { defined } from "../../../contracts/checked.js";
import type { PlanEnv } from "../../../plan/schema.js";
import { verifyDataFile, type DataFile } from "../../data-files.js";
import { demoData } from "./demo.js";
import { parseQuestions, type Question } from "./questions.js";
import { scanSql, type Row } from "./text.js";

export type SqlEnv = Extract<PlanEnv, { kind: "sql" }>;

export interface Column {
  readonly name: string;
  readonly type: string;
  readonly notnull: boolean;
  readonly pk: boolean;
  /** `table(column)` this column references, if a foreign key. */
  readonly references?: string;
}

export interface Table {
  readonly name: string;
  readonly kind: "table" | "view";
  readonly columns: readonly Column[];
}

/** A question's answer and the schema it needs, derived from its gold SQL. */
export interface Gold {
  readonly expected: readonly Row[];
  /** `table.column` keys (lower case) the answer needs. */
  readonly columns: ReadonlySet<string>;
  /** Tables the gold SQL reads, in order of first mention (their real names). */
  readonly tables: readonly string[];
}

export interface Connection {
  readonly db: Database.Database;
  close(): void;
}

export interface Dataset {
  /** "the bank_demo database" or the file's path, for messages. */
  readonly label: string;
  readonly demo: boolean;
  readonly tables: readonly Table[];
  readonly questions: readonly Question[];
  /** Lower-case name to table. */
  table(name: string): Table | undefined;
  /** A fresh connection for one episode: read-only, or a private writable copy. */
  open(readOnly: boolean): Connection;
  gold(task: number): Gold;
  /** Tables and `table.column` keys a statement mentions (prepared by the caller). */
  mentions(
    sql: string,
    resultColumns: readonly Database.ColumnDefinition[],
  ): { tables: string[]; columns: Set<string> };
  /** Words of its text values, for the vocabulary (the demo only; real databases may be large). */
  readonly textValues: readonly string[];
  /** Rows of a table (lower-case name; counted once), undefined for views and unknown names. */
  rowCount(table: string): number | undefined;
  /** Rows of the largest table. */
  readonly largestTable: number;
}

// --- datasets --------------------------------------------------------------------------------------

/** SQLite result codes that mean the database itself failed, not the statement. */
const FATAL_CODES =
  /^SQLITE_(CORRUPT|IOERR|NOMEM|CANTOPEN|FULL|INTERNAL|NOTADB|PERM|PROTOCOL|NOLFS|AUTH|FORMAT|MISUSE)/;

export function isFatal(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && FATAL_CODES.test(code);
}

/** Files at most this large get an in-memory copy per writable episode; larger ones a temp file. */
const IN_MEMORY_COPY_LIMIT = 256 * 1024 * 1024;

export function readSchema(db: Database.Database): Table[] {
  const objects = db
    .prepare(
      "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .all() as { name: string; type: "table" | "view" }[];
  return objects.map(({ name, type }) => {
    const fks = new Map<string, string>();
    for (const fk of db
      .prepare('SELECT "from" AS c, "table" AS t, "to" AS r FROM pragma_foreign_key_list(?)')
      .all(name) as { c: string; t: string; r: string | null }[]) {
      fks.set(fk.c.toLowerCase(), `${fk.t}(${fk.r ?? "rowid"})`);
    }
    const columns = (
      db.prepare('SELECT name, type, "notnull" AS nn, pk FROM pragma_table_info(?) ORDER BY cid').all(name) as {
        name: string;
        type: string;
        nn: number;
        pk: number;
      }[]
    ).map((c) => {
      const references = fks.get(c.name.toLowerCase());
      return {
        name: c.name,
        type: c.type || "ANY",
        notnull: c.nn !== 0,
        pk: c.pk !== 0,
        ...(references ? { references } : {}),
      };
    });
    return { name, kind: type, columns };
  });
}

interface Source {
  readonly label: string;
  readonly demo: boolean;
  openReadOnly(): Database.Database;
  openCopy(): Connection;
}

function demoSource(): Source {
  const bytes = demoData().database;
  return {
    label: "the bank_demo database",
    demo: true,
    openReadOnly: () => new Database(bytes, { readonly: true }),
    openCopy: () => {
      const db = new Database(bytes);
      return { db, close: () => db.close() };
    },
  };
}

function fileSource(absolute: string, file: DataFile, root: string | undefined): Source {
  let bytes: Buffer | undefined;
  const open = () => {
    verifyDataFile(file, root, "database");
    try {
      return new Database(absolute, { readonly: true, fileMustExist: true });
    } catch (error) {
      throw new EnvError(`sql env: cannot open the database '${absolute}': ${(error as Error).message}`, "unavailable");
    }
  };
  return {
    label: absolute,
    demo: false,
    openReadOnly: open,
    openCopy: () => {
      verifyDataFile(file, root, "database");
      if (statSync(absolute).size <= IN_MEMORY_COPY_LIMIT) {
        bytes ??= readFileSync(absolute);
        const db = new Database(bytes);
        return { db, close: () => db.close() };
      }
      const dir = mkdtempSync(path.join(tmpdir(), "arl-sql-"));
      const copy = path.join(dir, "episode.sqlite");
      copyFileSync(absolute, copy);
      const db = new Database(copy);
      return {
        db,
        close: () => {
          db.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
}

class LoadedDataset implements Dataset {
  readonly label: string;
  readonly demo: boolean;
  readonly tables: readonly Table[];
  private readonly byName: Map<string, Table>;
  private readonly analysis: Database.Database;
  private readonly golds = new Map<number, Gold>();
  private values: string[] | undefined;
  private counts: Map<string, number> | undefined;

  constructor(
    private readonly source: Source,
    readonly questions: readonly Question[],
  ) {
    this.label = source.label;
    this.demo = source.demo;
    this.analysis = source.openReadOnly();
    try {
      this.tables = readSchema(this.analysis);
    } catch (error) {
      this.analysis.close();
      throw new EnvError(
        `sql env: cannot read the schema of ${source.label}: ${(error as Error).message}`,
        "unavailable",
      );
    }
    this.byName = new Map(this.tables.map((t) => [t.name.toLowerCase(), t]));
  }

  table(name: string): Table | undefined {
    return this.byName.get(name.trim().toLowerCase());
  }

  open(readOnly: boolean): Connection {
    if (!readOnly) return this.source.openCopy();
    const db = this.source.openReadOnly();
    return { db, close: () => db.close() };
  }

  mentions(
    sql: string,
    resultColumns: readonly Database.ColumnDefinition[],
  ): { tables: string[]; columns: Set<string> } {
    const ids = scanSql(sql).identifiers;
    const named = new Set(ids);
    const tables: string[] = [];
    for (const id of ids) {
      const t = this.byName.get(id);
      if (t && !tables.includes(t.name)) tables.push(t.name);
    }
    const columns = new Set<string>();
    for (const name of tables) {
      const t = defined(this.byName.get(name.toLowerCase()), `table ${name}`);
      for (const c of t.columns)
        if (named.has(c.name.toLowerCase())) columns.add(`${t.name.toLowerCase()}.${c.name.toLowerCase()}`);
    }
    for (const c of resultColumns) {
      if (c.table && c.column && this.byName.has(c.table.toLowerCase()))
        columns.add(`${c.table.toLowerCase()}.${c.column.toLowerCase()}`);
    }
    return { tables, columns };
  }

  gold(task: number): Gold {
    const known = this.golds.get(task);
    if (known) return known;
    const question = this.questions[task];
    if (!question)
      throw new EnvError(`sql env: there is no question ${task} (${this.questions.length} questions)`, "protocol");
    let gold: Gold;
    if (question.sql === undefined) {
      // No gold SQL: the columns it needs are unknown; every column counts.
      const columns = new Set(
        this.tables.flatMap((t) => t.columns.map((c) => `${t.name.toLowerCase()}.${c.name.toLowerCase()}`)),
      );
      gold = { expected: question.expected ?? [], columns, tables: [] };
    } else {
      let rows: Row[];
      let resultColumns: Database.ColumnDefinition[];
      try {
        const stmt = this.analysis.prepare(question.sql);
        if (!stmt.reader) throw new Error("it returns no rows");
        resultColumns = stmt.columns();
        rows = stmt.raw(true).all() as Row[];
      } catch (error) {
        throw new EnvError(
          `sql env: the gold SQL of question ${task} fails on ${this.label}: ${(error as Error).message}`,
          "protocol",
        );
      }
      const { tables, columns } = this.mentions(question.sql, resultColumns);
      if (columns.size === 0)
        for (const name of tables)
          for (const c of defined(this.byName.get(name.toLowerCase()), `table ${name}`).columns)
            columns.add(`${name.toLowerCase()}.${c.name.toLowerCase()}`);
      gold = { expected: question.expected ?? rows, columns, tables };
    }
    this.golds.set(task, gold);
    return gold;
  }

  private rowCounts(): Map<string, number> {
    if (!this.counts) {
      this.counts = new Map();
      for (const t of this.tables) {
        if (t.kind !== "table") continue;
        const n = this.analysis
          .prepare(`SELECT COUNT(*) FROM "${t.name.replace(/"/g, '""')}"`)
          .pluck()
          .get();
        this.counts.set(t.name.toLowerCase(), Number(n));
      }
    }
    return this.counts;
  }

  rowCount(table: string): number | undefined {
    return this.rowCounts().get(table.toLowerCase());
  }

  get largestTable(): number {
    return Math.max(1, ...this.rowCounts().values());
  }

  get textValues(): readonly string[] {
    if (!this.demo) return [];
    if (!this.values) {
      const words = new Set<string>();
      for (const t of this.tables) {
        for (const c of t.columns) {
          if (!/TEXT/i.test(c.type)) continue;
          const sql = `SELECT DISTINCT "${c.name.replace(/"/g, '""')}" FROM "${t.name.replace(/"/g, '""')}"`;
          for (const v of this.analysis.prepare(sql).pluck().all()) if (typeof v === "string") words.add(v);
        }
      }
      this.values = [...words].sort();
    }
    return this.values;
  }
}

const datasets = new Map<string, Dataset>();

/** The dataset a plan env names, loaded (and its files verified) once per process. */
export function loadDataset(env: SqlEnv, root: string | undefined): Dataset {
  // Each file is checked against its own sha256 first, so that a changed database is reported as such.
  const dbPath = env.database ? verifyDataFile(env.database, root, "database") : null;
  const qPath = env.questions ? verifyDataFile(env.questions, root, "questions") : null;
  if (env.database !== null && env.questions === null) {
    throw new EnvError(
      "sql env: a database of your own needs its questions file too (questions: none is only for the bundled demo database)",
      "protocol",
    );
  }
  const key = JSON.stringify([dbPath, env.database?.sha256 ?? null, qPath, env.questions?.sha256 ?? null]);
  const known = datasets.get(key);
  if (known) return known;
  const source = dbPath && env.database ? fileSource(dbPath, env.database, root) : demoSource();
  const questions = qPath
    ? parseQuestions(readFileSync(qPath, "utf8"), qPath)
    : demoData().questions.map((x) => ({ text: x.question, sql: x.sql, ordered: x.ordered }));
  const dataset = new LoadedDataset(source, questions);
  datasets.set(key, dataset);
  return dataset;
}
