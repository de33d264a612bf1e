// The bundled `bank_demo` data: a small bank database (branches, customers, accounts,
// transactions) and questions about it, each with its gold SQL. Everything comes from one seeded
// PRNG (mulberry32) and integer arithmetic, so the SQL script and the question list are the same
// bytes on every machine; the database file is built from the script by the bundled SQLite
// (better-sqlite3 pins its version), and each question's expected table is what its gold SQL
// returns. Questions whose answer is ambiguous (ties for a "largest"), empty or NULL are dropped.
// The database's rows and script are in demo-bank.ts, the questions in demo-questions.ts.
import Database from "better-sqlite3";
import { mulberry32, shuffled } from "../../../contracts/random.js";
import { generateRows, script } from "./demo-bank.js";
import { candidates, usable, type DemoQuestion } from "./demo-questions.js";

const DEMO_SEED = 0x5eed_ba4c;

export interface DemoData {
  /** The SQL script that builds the database (schema and rows). */
  readonly script: string;
  /** The database, serialized (an SQLite file's bytes). */
  readonly database: Buffer;
  readonly questions: readonly DemoQuestion[];
}

/** Generates the demo afresh (no caching): same bytes every time, on every machine. */
export function generateDemo(seed = DEMO_SEED): DemoData {
  const random = mulberry32(seed);
  const rows = generateRows(random);
  const text = script(rows);
  const db = new Database(":memory:");
  try {
    db.exec(text);
    const kept = candidates(random, rows).filter((c) => usable(db, c));
    const questions = shuffled(kept, random).map(({ question, sql, ordered }) => ({ question, sql, ordered }));
    return { script: text, database: db.serialize(), questions };
  } finally {
    db.close();
  }
}

let cached: DemoData | undefined;
/** The demo, generated once per process. */
export function demoData(): DemoData {
  cached ??= generateDemo();
  return cached;
}

/** The questions as JSON lines, the format of a questions file. */
export function questionsJsonl(questions: readonly DemoQuestion[]): string {
  return (
    questions
      .map((x) => JSON.stringify({ question: x.question, sql: x.sql, ...(x.ordered ? { ordered: true } : {}) }))
      .join("\n") + "\n"
  );
}
