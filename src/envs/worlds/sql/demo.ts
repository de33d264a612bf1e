// The bundled `bank_demo` data: a small bank database (branches, customers, accounts,
// transactions) and questions about it, each with its gold SQL. Everything comes from one seeded
// PRNG (mulberry32) and integer arithmetic, so the SQL script and the question list are the same
// bytes on every machine; the database file is built from the script by the bundled SQLite
// (better-sqlite3 pins its version), and each question's expected table is what its gold SQL
// returns. Questions whose answer is ambiguous (ties for a "largest"), empty or NULL are dropped.
import Database from "better-sqlite3";
import { mulberry32, shuffled, type Random } from "../../../contracts/random.js";
import { at } from "../../../contracts/checked.js";

const DEMO_SEED = 0x5eed_ba4c;

export interface DemoQuestion {
  readonly question: string;
  readonly sql: string;
  /** The question asks for a particular row order. */
  readonly ordered: boolean;
}

export interface DemoData {
  /** The SQL script that builds the database (schema and rows). */
  readonly script: string;
  /** The database, serialized (an SQLite file's bytes). */
  readonly database: Buffer;
  readonly questions: readonly DemoQuestion[];
}

const CITIES = ["Lyon", "Paris", "Marseille", "Toulouse", "Nantes", "Lille", "Bordeaux", "Strasbourg"] as const;
/** Cities where customers live without a branch there. */
const OTHER_CITIES = ["Grenoble", "Dijon"] as const;
const BRANCH_NAMES = [
  "Central",
  "Riverside",
  "Old Town",
  "Station",
  "Harbour",
  "Market",
  "Cathedral",
  "University",
] as const;
const FIRST_NAMES = [
  "Alice",
  "Bruno",
  "Camille",
  "David",
  "Emma",
  "Felix",
  "Gabriel",
  "Hugo",
  "Ines",
  "Jade",
  "Karim",
  "Louise",
  "Manon",
  "Nathan",
  "Olivia",
  "Paul",
  "Quentin",
  "Rose",
  "Sofia",
  "Thomas",
  "Ugo",
  "Victor",
  "Wendy",
  "Yanis",
  "Zoe",
  "Adam",
  "Chloe",
  "Leo",
  "Lina",
  "Noah",
] as const;
const LAST_NAMES = [
  "Martin",
  "Bernard",
  "Dubois",
  "Durand",
  "Lefebvre",
  "Moreau",
  "Laurent",
  "Simon",
  "Michel",
  "Garcia",
  "David",
  "Bertrand",
  "Roux",
  "Vincent",
  "Fournier",
  "Morel",
  "Girard",
  "Andre",
  "Mercier",
  "Dupont",
  "Lambert",
  "Bonnet",
  "Francois",
  "Martinez",
  "Legrand",
  "Garnier",
  "Faure",
  "Rousseau",
  "Blanc",
  "Guerin",
] as const;
const ACCOUNT_TYPES = ["checking", "savings", "business"] as const;
const TX_KINDS = ["deposit", "withdrawal", "transfer", "fee"] as const;
const TX_YEARS = [2022, 2023, 2024] as const;

const N_CUSTOMERS = 120;
const N_ACCOUNTS = 200;
const N_TRANSACTIONS = 480;

const SCHEMA = `CREATE TABLE branches (
  branch_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  city TEXT NOT NULL,
  opened_year INTEGER NOT NULL
);
CREATE TABLE customers (
  customer_id INTEGER PRIMARY KEY,
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL,
  city TEXT NOT NULL,
  birth_year INTEGER NOT NULL
);
CREATE TABLE accounts (
  account_id INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers(customer_id),
  branch_id INTEGER NOT NULL REFERENCES branches(branch_id),
  type TEXT NOT NULL,
  status TEXT NOT NULL,
  balance REAL NOT NULL,
  opened_on TEXT NOT NULL
);
CREATE TABLE transactions (
  transaction_id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(account_id),
  kind TEXT NOT NULL,
  amount REAL NOT NULL,
  tx_date TEXT NOT NULL
);
`;

interface Branch {
  id: number;
  name: string;
  city: string;
  opened: number;
}
interface Customer {
  id: number;
  first: string;
  last: string;
  city: string;
  born: number;
}
interface Account {
  id: number;
  customer: number;
  branch: number;
  type: string;
  status: string;
  cents: number;
  opened: string;
}
interface Tx {
  id: number;
  account: number;
  kind: string;
  cents: number;
  date: string;
}

const int = (random: Random, lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
const pick = <T>(random: Random, xs: readonly T[]): T => at(xs, Math.floor(random() * xs.length));
const pad2 = (n: number) => String(n).padStart(2, "0");
const date = (random: Random, year: number) => `${year}-${pad2(int(random, 1, 12))}-${pad2(int(random, 1, 28))}`;
/** Cents as an exact decimal literal (no float formatting involved). */
const money = (cents: number) => `${Math.floor(cents / 100)}.${pad2(cents % 100)}`;
const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

function generateRows(random: Random) {
  const years = shuffled(
    Array.from({ length: 60 }, (_, i) => 1955 + i),
    random,
  ).slice(0, CITIES.length);
  const branches: Branch[] = CITIES.map((city, i) => ({
    id: i + 1,
    name: `${city} ${at(BRANCH_NAMES, i)}`,
    city,
    opened: at(years, i),
  }));

  const names = shuffled(
    FIRST_NAMES.flatMap((f) => LAST_NAMES.map((l) => [f, l] as const)),
    random,
  ).slice(0, N_CUSTOMERS);
  const homes = [...CITIES, ...OTHER_CITIES];
  const customers: Customer[] = names.map(([first, last], i) => ({
    id: i + 1,
    first,
    last,
    city: pick(random, homes),
    born: int(random, 1940, 2004),
  }));

  const accounts: Account[] = [];
  // Every customer holds at least one account; the rest go to random customers.
  const owners = [
    ...customers.map((c) => c.id),
    ...Array.from({ length: N_ACCOUNTS - N_CUSTOMERS }, () => int(random, 1, N_CUSTOMERS)),
  ];
  for (const [i, owner] of shuffled(owners, random).entries()) {
    const customer = at(customers, owner - 1);
    const local = branches.find((b) => b.city === customer.city);
    const branch = local && random() < 0.8 ? local : pick(random, branches);
    const r = random();
    const type = r < 0.55 ? "checking" : r < 0.88 ? "savings" : "business";
    const status = random() < 0.1 ? "closed" : "open";
    const cents =
      status === "closed"
        ? 0
        : type === "checking"
          ? int(random, 0, 800_000)
          : type === "savings"
            ? int(random, 50_000, 6_000_000)
            : int(random, 200_000, 15_000_000);
    accounts.push({
      id: 1001 + i,
      customer: customer.id,
      branch: branch.id,
      type,
      status,
      cents,
      opened: date(random, int(random, 2005, 2021)),
    });
  }

  const open = accounts.filter((a) => a.status === "open");
  const txs: Tx[] = [];
  for (let i = 0; i < N_TRANSACTIONS; i++) {
    const account = pick(random, open);
    const r = random();
    const kind = r < 0.4 ? "deposit" : r < 0.75 ? "withdrawal" : r < 0.92 ? "transfer" : "fee";
    const cents =
      kind === "deposit"
        ? int(random, 2_000, 300_000)
        : kind === "withdrawal"
          ? int(random, 2_000, 150_000)
          : kind === "transfer"
            ? int(random, 5_000, 500_000)
            : int(random, 100, 4_000);
    txs.push({ id: i + 1, account: account.id, kind, cents, date: date(random, pick(random, TX_YEARS)) });
  }
  txs.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.id - b.id));
  txs.forEach((t, i) => (t.id = i + 1));
  return { branches, customers, accounts, txs };
}

function insert(table: string, rows: readonly (readonly string[])[]): string {
  const lines: string[] = [];
  for (let i = 0; i < rows.length; i += 50) {
    lines.push(
      `INSERT INTO ${table} VALUES\n${rows
        .slice(i, i + 50)
        .map((r) => `  (${r.join(", ")})`)
        .join(",\n")};`,
    );
  }
  return lines.join("\n");
}

type Rows = ReturnType<typeof generateRows>;

function script(rows: Rows): string {
  return [
    SCHEMA,
    insert(
      "branches",
      rows.branches.map((b) => [String(b.id), quote(b.name), quote(b.city), String(b.opened)]),
    ),
    insert(
      "customers",
      rows.customers.map((c) => [String(c.id), quote(c.first), quote(c.last), quote(c.city), String(c.born)]),
    ),
    insert(
      "accounts",
      rows.accounts.map((a) => [
        String(a.id),
        String(a.customer),
        String(a.branch),
        quote(a.type),
        quote(a.status),
        money(a.cents),
        quote(a.opened),
      ]),
    ),
    insert(
      "transactions",
      rows.txs.map((t) => [String(t.id), String(t.account), quote(t.kind), money(t.cents), quote(t.date)]),
    ),
    "",
  ].join("\n");
}

interface Candidate extends DemoQuestion {
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

function candidates(random: Random, rows: Rows): Candidate[] {
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

function usable(db: Database.Database, c: Candidate): boolean {
  const rows = db.prepare(c.sql).raw().all() as unknown[][];
  if (rows.length === 0 || rows.every((r) => r.every((v) => v === null))) return false;
  if (c.tie) {
    const ranking = (db.prepare(c.tie).raw().all() as unknown[][]).map((r) => r[0]);
    if (ranking.some((v, i) => i > 0 && v === ranking[i - 1])) return false;
  }
  return true;
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
