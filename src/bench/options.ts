// The bench's command line (`node dist/bench/main.js [options]`): every option it knows, parsed
// strictly, so a misspelt option or section name stops with the usage instead of running the whole
// bench for a quarter of an hour with the option ignored.

export interface BenchArgs {
  readonly help: boolean;
  readonly json: boolean;
  readonly instructions: boolean;
  readonly only?: string;
  readonly runs?: number;
  readonly warmup?: number;
  readonly lines?: number;
  readonly seeds?: number;
  readonly rounds?: number;
  readonly steps?: number;
  readonly tokens?: number;
}

type Counted = "runs" | "warmup" | "lines" | "seeds" | "rounds" | "steps" | "tokens";

/** Options that take a positive integer, with what each sets (the usage's lines). */
const COUNTS: readonly (readonly [Counted, string])[] = [
  ["runs", "measured runs of a timed case (default 9; at least 7 when not given)"],
  ["warmup", "warm-up runs of a timed case, discarded (default 3)"],
  ["lines", "the front end's generated spec size in lines (default 10000)"],
  ["seeds", "async: seeds per mode (default 1)"],
  ["rounds", "peer and async: interleaved rounds, each running every side or mode once (default 3)"],
  ["steps", "peer: training steps a side runs in a round; async: iterations a run (defaults 11 and 12)"],
  ["tokens", "peer: new tokens a sample may generate (default 64: 4 prompts x G 4 x 64 = 1,024 a step)"],
];

export class BenchUsageError extends Error {}

/** The usage text, naming the sections that `--only` chooses from. */
export function benchUsage(sections: readonly string[]): string {
  const width = 16;
  const line = (flag: string, text: string) => `  ${flag.padEnd(width)}${text}`;
  return [
    "usage: node dist/bench/main.js [options]        (npm run bench -- [options])",
    "Runs every benchmark section in order and prints one table a section; timings are never asserted by tests.",
    "",
    "options:",
    line(
      "--only TEXT",
      "just the sections whose name contains TEXT (the mini sections run only this way: --only mini)",
    ),
    line("--json", "print the results as JSON instead of tables"),
    ...COUNTS.map(([name, text]) => line(`--${name} N`, text)),
    line("--instructions", "front end: also count each case's instructions under valgrind (many minutes)"),
    line("--help, -h", "print this and exit"),
    "",
    "sections:",
    ...sections.map((s) => `  ${s}`),
  ].join("\n");
}

function count(name: string, raw: string | undefined): number {
  const n = Number(raw);
  if (raw === undefined || raw === "" || !Number.isInteger(n) || n < 1)
    throw new BenchUsageError(`${name} needs a positive integer, got ${raw === undefined ? "nothing" : `'${raw}'`}`);
  return n;
}

/** Parses the command line; throws BenchUsageError on an unknown option, a missing or bad value. */
export function parseBenchArgs(args: readonly string[]): BenchArgs {
  const out: { -readonly [K in keyof BenchArgs]: BenchArgs[K] } = { help: false, json: false, instructions: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    const eq = arg.indexOf("=");
    const [flag, inline] = arg.startsWith("--") && eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const value = () => inline ?? args[++i];
    if (flag === "--help" || flag === "-h") out.help = true;
    else if (flag === "--json" || flag === "--instructions") {
      if (inline !== undefined) throw new BenchUsageError(`${flag} takes no value`);
      out[flag === "--json" ? "json" : "instructions"] = true;
    } else if (flag === "--only") {
      const text = value();
      if (text === undefined || text === "") throw new BenchUsageError("--only needs the text of a section's name");
      out.only = text;
    } else {
      const counted = COUNTS.find(([name]) => `--${name}` === flag);
      if (!counted) throw new BenchUsageError(`unknown ${arg.startsWith("-") ? "option" : "argument"} '${arg}'`);
      out[counted[0]] = count(flag, value());
    }
  }
  return out;
}

/** The sections `only` picks (by a part of their name); every section when it is undefined. */
export function pickSections<S extends { readonly name: string }>(
  all: readonly S[],
  onRequest: readonly S[],
  only: string | undefined,
): S[] {
  if (only === undefined) return [...all];
  const picked = [...all, ...onRequest].filter((s) => s.name.includes(only));
  if (picked.length === 0) throw new BenchUsageError(`no section's name contains '${only}'`);
  return picked;
}
