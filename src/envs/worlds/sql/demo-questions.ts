// The questions of the bundled `bank_demo` data (demo.ts): every candidate question about the
// bank database with its gold SQL, and the test that keeps only those with one clear, non-empty
// answer. Apart from the database (demo-bank.ts) as the part that says what is asked.
import type Database from "better-sqlite3";
import { shuffled, type Random } from "../../../contracts/random.js";
import {
  ACCOUNT_TYPES,
  CITIES,
  OTHER_CITIES,
  quote,
  TX_KINDS,
  TX_YEARS,
  type Customer,
  type Rows,
} from "./demo-bank.js";

export interface DemoQuestion {
  readonly question: string;
  readonly sql: string;
  /** The question asks for a particular row order. */
  readonly ordered: boolean;
}

export interface Candidate extends DemoQuestion {
  /** For ranking questions: the ranking values, best first, one row more than the answer has; a tie between neighbours drops the question. */
  readonly tie?: string;
}

const q = (question: string, sql: string, extra: { ordered?: boolean; tie?: string } = {}): Candidate => ({
  question,
  sql,
  ordered: extra.ordered ?? false,
  ...(extra.tie ? { tie: extra.tie } : {}),
});
const plural: Record<string, string> = {
  deposit: "deposits",
  withdrawal: "withdrawals",
  transfer: "transfers",
  fee: "fees",
};

export function candidates(random: Random, rows: Rows): Candidate[] {
  const out: Candidate[] = [];
  const ab = "accounts a JOIN branches b ON a.branch_id = b.branch_id";
  const tab = "transactions t JOIN accounts a ON t.account_id = a.account_id";
  const year = (col: string, y: number) => `strftime('%Y', ${col}) = '${y}'`;

  for (const city of CITIES) {
    const c = quote(city);
    out.push(q(`How many accounts does the branch in ${city} hold?`, `SELECT COUNT(*) FROM ${ab} WHERE b.city = ${c}`));
    out.push(
      q(
        `How many closed accounts does the branch in ${city} hold?`,
        `SELECT COUNT(*) FROM ${ab} WHERE b.city = ${c} AND a.status = 'closed'`,
      ),
    );
    out.push(
      q(
        `What is the total balance of the accounts held at the branch in ${city}?`,
        `SELECT SUM(a.balance) FROM ${ab} WHERE b.city = ${c}`,
      ),
    );
    out.push(q(`What is the name of the branch in ${city}?`, `SELECT name FROM branches WHERE city = ${c}`));
    out.push(q(`In which year did the branch in ${city} open?`, `SELECT opened_year FROM branches WHERE city = ${c}`));
    out.push(
      q(
        `How many accounts held at the branch in ${city} have no transactions at all?`,
        `SELECT COUNT(*) FROM ${ab} WHERE b.city = ${c} AND a.account_id NOT IN (SELECT account_id FROM transactions)`,
      ),
    );
    for (const type of ACCOUNT_TYPES) {
      out.push(
        q(
          `How many ${type} accounts does the branch in ${city} hold?`,
          `SELECT COUNT(*) FROM ${ab} WHERE b.city = ${c} AND a.type = '${type}'`,
        ),
      );
      out.push(
        q(
          `What is the average balance of the ${type} accounts at the branch in ${city}?`,
          `SELECT AVG(a.balance) FROM ${ab} WHERE b.city = ${c} AND a.type = '${type}'`,
        ),
      );
    }
    for (const kind of TX_KINDS) {
      out.push(
        q(
          `What is the total amount of the ${plural[kind]} on accounts held at the branch in ${city}?`,
          `SELECT SUM(t.amount) FROM ${tab} JOIN branches b ON a.branch_id = b.branch_id WHERE b.city = ${c} AND t.kind = '${kind}'`,
        ),
      );
    }
    for (const threshold of [5000, 20000, 50000]) {
      out.push(
        q(
          `List the first and last names of the customers who hold an account at the branch in ${city} with a balance over ${threshold}.`,
          `SELECT DISTINCT cu.first_name, cu.last_name FROM customers cu JOIN accounts a ON a.customer_id = cu.customer_id JOIN branches b ON a.branch_id = b.branch_id WHERE b.city = ${c} AND a.balance > ${threshold}`,
        ),
      );
    }
  }
  for (const city of [...CITIES, ...OTHER_CITIES]) {
    const c = quote(city);
    out.push(q(`How many customers live in ${city}?`, `SELECT COUNT(*) FROM customers WHERE city = ${c}`));
    out.push(
      q(
        `In which year was the oldest customer living in ${city} born?`,
        `SELECT MIN(birth_year) FROM customers WHERE city = ${c}`,
      ),
    );
    out.push(
      q(
        `Give the first and last name of the customer living in ${city} with the largest total balance.`,
        `SELECT cu.first_name, cu.last_name FROM customers cu JOIN accounts a ON a.customer_id = cu.customer_id WHERE cu.city = ${c} GROUP BY cu.customer_id ORDER BY SUM(a.balance) DESC LIMIT 1`,
        {
          tie: `SELECT SUM(a.balance) AS v FROM customers cu JOIN accounts a ON a.customer_id = cu.customer_id WHERE cu.city = ${c} GROUP BY cu.customer_id ORDER BY v DESC LIMIT 2`,
        },
      ),
    );
    out.push(
      q(
        `How many customers living in ${city} hold an account at a branch in another city?`,
        `SELECT COUNT(DISTINCT cu.customer_id) FROM customers cu JOIN accounts a ON a.customer_id = cu.customer_id JOIN branches b ON a.branch_id = b.branch_id WHERE cu.city = ${c} AND b.city <> cu.city`,
      ),
    );
  }
  out.push(
    q(
      "Give the first and last name of the customer with the largest total balance.",
      "SELECT cu.first_name, cu.last_name FROM customers cu JOIN accounts a ON a.customer_id = cu.customer_id GROUP BY cu.customer_id ORDER BY SUM(a.balance) DESC LIMIT 1",
      { tie: "SELECT SUM(balance) AS v FROM accounts GROUP BY customer_id ORDER BY v DESC LIMIT 2" },
    ),
  );
  out.push(
    q(
      "In which city is the branch that holds the most accounts?",
      `SELECT b.city FROM ${ab} GROUP BY b.branch_id ORDER BY COUNT(*) DESC LIMIT 1`,
      { tie: `SELECT COUNT(*) AS v FROM accounts GROUP BY branch_id ORDER BY v DESC LIMIT 2` },
    ),
  );
  out.push(
    q(
      "How many accounts have no transactions at all?",
      "SELECT COUNT(*) FROM accounts WHERE account_id NOT IN (SELECT account_id FROM transactions)",
    ),
  );
  out.push(
    q(
      "List the cities of all branches, from the oldest branch to the newest.",
      "SELECT city FROM branches ORDER BY opened_year",
      { ordered: true },
    ),
  );
  for (const type of ACCOUNT_TYPES) {
    out.push(
      q(
        `What is the total balance of all ${type} accounts?`,
        `SELECT SUM(balance) FROM accounts WHERE type = '${type}'`,
      ),
    );
    out.push(
      q(
        `How many ${type} accounts are open?`,
        `SELECT COUNT(*) FROM accounts WHERE type = '${type}' AND status = 'open'`,
      ),
    );
    out.push(
      q(
        `In which city is the branch that holds the most ${type} accounts?`,
        `SELECT b.city FROM ${ab} WHERE a.type = '${type}' GROUP BY b.branch_id ORDER BY COUNT(*) DESC LIMIT 1`,
        { tie: `SELECT COUNT(*) AS v FROM accounts WHERE type = '${type}' GROUP BY branch_id ORDER BY v DESC LIMIT 2` },
      ),
    );
    out.push(
      q(
        `List the ids of the five ${type} accounts with the largest balances, largest first.`,
        `SELECT account_id FROM accounts WHERE type = '${type}' ORDER BY balance DESC LIMIT 5`,
        { ordered: true, tie: `SELECT balance AS v FROM accounts WHERE type = '${type}' ORDER BY v DESC LIMIT 6` },
      ),
    );
  }
  for (const y of TX_YEARS) {
    for (const kind of TX_KINDS) {
      out.push(
        q(
          `How many ${plural[kind]} were made in ${y}?`,
          `SELECT COUNT(*) FROM transactions WHERE kind = '${kind}' AND ${year("tx_date", y)}`,
        ),
      );
      out.push(
        q(
          `What is the total amount of the ${plural[kind]} made in ${y}?`,
          `SELECT SUM(amount) FROM transactions WHERE kind = '${kind}' AND ${year("tx_date", y)}`,
        ),
      );
      out.push(
        q(
          `What was the largest single ${kind} in ${y}?`,
          `SELECT MAX(amount) FROM transactions WHERE kind = '${kind}' AND ${year("tx_date", y)}`,
        ),
      );
    }
    out.push(
      q(
        `Which account had the most transactions in ${y}? Give its id.`,
        `SELECT account_id FROM transactions WHERE ${year("tx_date", y)} GROUP BY account_id ORDER BY COUNT(*) DESC LIMIT 1`,
        {
          tie: `SELECT COUNT(*) AS v FROM transactions WHERE ${year("tx_date", y)} GROUP BY account_id ORDER BY v DESC LIMIT 2`,
        },
      ),
    );
    out.push(
      q(
        `In which city is the branch whose accounts received the largest total amount of deposits in ${y}?`,
        `SELECT b.city FROM ${tab} JOIN branches b ON a.branch_id = b.branch_id WHERE t.kind = 'deposit' AND ${year("t.tx_date", y)} GROUP BY b.branch_id ORDER BY SUM(t.amount) DESC LIMIT 1`,
        {
          tie: `SELECT SUM(t.amount) AS v FROM ${tab} WHERE t.kind = 'deposit' AND ${year("t.tx_date", y)} GROUP BY a.branch_id ORDER BY v DESC LIMIT 2`,
        },
      ),
    );
  }
  for (let y = 1950; y <= 2000; y += 5)
    out.push(q(`How many customers were born before ${y}?`, `SELECT COUNT(*) FROM customers WHERE birth_year < ${y}`));
  for (let y = 2005; y <= 2021; y++)
    out.push(
      q(`How many accounts were opened in ${y}?`, `SELECT COUNT(*) FROM accounts WHERE ${year("opened_on", y)}`),
    );
  for (const y of [1970, 1980, 1990, 2000, 2010]) {
    out.push(
      q(
        `List the cities of the branches opened before ${y}, from the oldest branch to the newest.`,
        `SELECT city FROM branches WHERE opened_year < ${y} ORDER BY opened_year`,
        { ordered: true },
      ),
    );
  }

  // Per-customer and per-account questions: a deterministic sample.
  const sample = <T>(xs: readonly T[], n: number) => shuffled(xs, random).slice(0, n);
  const who = (c: Customer) => `cu.first_name = ${quote(c.first)} AND cu.last_name = ${quote(c.last)}`;
  const cja = "customers cu JOIN accounts a ON a.customer_id = cu.customer_id";
  for (const c of sample(rows.customers, 40))
    out.push(q(`How many accounts does ${c.first} ${c.last} hold?`, `SELECT COUNT(*) FROM ${cja} WHERE ${who(c)}`));
  for (const c of sample(rows.customers, 40))
    out.push(
      q(
        `What is the total balance of the accounts of ${c.first} ${c.last}?`,
        `SELECT SUM(a.balance) FROM ${cja} WHERE ${who(c)}`,
      ),
    );
  for (const c of sample(rows.customers, 40)) {
    out.push(
      q(
        `How many transactions were made on the accounts of ${c.first} ${c.last}?`,
        `SELECT COUNT(*) FROM ${cja} JOIN transactions t ON t.account_id = a.account_id WHERE ${who(c)}`,
      ),
    );
  }
  for (const c of sample(rows.customers, 20))
    out.push(q(`In which city does ${c.first} ${c.last} live?`, `SELECT city FROM customers cu WHERE ${who(c)}`));
  const multi = rows.customers.filter(
    (c) => rows.accounts.filter((a) => a.customer === c.id && a.status === "open").length >= 2,
  );
  for (const c of sample(multi, 20)) {
    out.push(
      q(
        `List the ids of the open accounts of ${c.first} ${c.last}, from the largest balance to the smallest.`,
        `SELECT a.account_id FROM ${cja} WHERE ${who(c)} AND a.status = 'open' ORDER BY a.balance DESC`,
        {
          ordered: true,
          tie: `SELECT a.balance FROM ${cja} WHERE ${who(c)} AND a.status = 'open' ORDER BY a.balance DESC`,
        },
      ),
    );
  }
  for (const a of sample(rows.accounts, 40))
    out.push(q(`What is the balance of account ${a.id}?`, `SELECT balance FROM accounts WHERE account_id = ${a.id}`));
  for (const a of sample(rows.accounts, 30))
    out.push(
      q(
        `In which city is the branch that holds account ${a.id}?`,
        `SELECT b.city FROM ${ab} WHERE a.account_id = ${a.id}`,
      ),
    );
  for (const a of sample(rows.accounts, 20)) {
    out.push(
      q(
        `Give the first and last name of the holder of account ${a.id}.`,
        `SELECT cu.first_name, cu.last_name FROM ${cja} WHERE a.account_id = ${a.id}`,
      ),
    );
  }
  return out;
}

export function usable(db: Database.Database, c: Candidate): boolean {
  const rows = db.prepare(c.sql).raw().all() as unknown[][];
  if (rows.length === 0 || rows.every((r) => r.every((v) => v === null))) return false;
  if (c.tie) {
    const ranking = (db.prepare(c.tie).raw().all() as unknown[][]).map((r) => r[0]);
    if (ranking.some((v, i) => i > 0 && v === ranking[i - 1])) return false;
  }
  return true;
}
