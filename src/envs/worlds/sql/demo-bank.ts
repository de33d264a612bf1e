// The bank database of the bundled `bank_demo` data (demo.ts): branches, customers, accounts and
// transactions drawn from one seeded PRNG with integer arithmetic, and the SQL script that builds
// them, the same bytes on every machine. Apart from the questions (demo-questions.ts) as the
// data the questions are asked about.
import { shuffled, type Random } from "../../../contracts/random.js";
import { at } from "../../../contracts/checked.js";

export const CITIES = ["Lyon", "Paris", "Marseille", "Toulouse", "Nantes", "Lille", "Bordeaux", "Strasbourg"] as const;
/** Cities where customers live without a branch there. */
export const OTHER_CITIES = ["Grenoble", "Dijon"] as const;
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
export const ACCOUNT_TYPES = ["checking", "savings", "business"] as const;
export const TX_KINDS = ["deposit", "withdrawal", "transfer", "fee"] as const;
export const TX_YEARS = [2022, 2023, 2024] as const;

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
export interface Customer {
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
export const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

export function generateRows(random: Random) {
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

export type Rows = ReturnType<typeof generateRows>;

export function script(rows: Rows): string {
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
