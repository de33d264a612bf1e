// Front-end benchmark: lex + parse + import resolution of a generated ~10,000-line spec, against
// yaml.parse + ajv validation of the same content written the way a Hydra-style YAML user
// would write it. Goal: ARL is at most as slow as YAML + ajv (ratio <= 1.0).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Ajv, type ValidateFunction } from "ajv";
import * as YAML from "yaml";
import { fileURLToPath } from "node:url";
import { Compiler } from "../compiler.js";
import { at, defined } from "../contracts/checked.js";
import { mulberry32 as rng } from "../contracts/random.js";
import { ModuleLoader } from "../language/imports.js";
import { buildLock, lockPath, renderLock } from "../plan/lock.js";
import { loweringContext, lowerModel } from "../plan/lower.js";
import { analyze } from "../semantics/analyze.js";
import { lex } from "../language/lexer.js";
import { parse } from "../language/parse.js";
import { parser } from "../language/parser.js";
import { arlEntries, arlFile, yamlFile } from "./frontend-print.js";
import { yamlSchema } from "./frontend-schema.js";
import { common, unit, type Entry } from "./frontend-spec.js";
import {
  consume,
  defaultMeasureOptions,
  paired,
  timed,
  type BenchResult,
  type BenchSection,
  type MeasureOptions,
} from "./harness.js";
import type { FrontendJob } from "./frontend-instructions-child.js";
import { instructionsPerRun, valgrindAvailable } from "./instructions.js";

// --- the corpus -----------------------------------------------------------------------------------

interface Corpus {
  readonly dir: string;
  readonly arlEntry: string;
  readonly arlFiles: readonly string[];
  readonly yamlFiles: readonly string[];
  readonly arlLines: number;
  readonly arlBytes: number;
  readonly yamlLines: number;
  readonly yamlBytes: number;
  dispose(): void;
}

function lineCount(s: string): number {
  return s.split("\n").length - (s.endsWith("\n") ? 1 : 0);
}

/** Writes the ARL and YAML versions of the spec (entry + one imported file) to a temp dir. */
function writeCorpus(targetLines = 10_000): Corpus {
  const next = rng(20_240_601);
  const entries: Entry[] = [];
  const arlOf = (es: Entry[]) => arlFile(['import "./common" as common'], es, "Front-end benchmark spec.");
  const mainArl = (): string => arlOf(entries);
  // Grow by whole units until the entry file reaches the target (fast: count lines per unit).
  let lines = lineCount(arlOf([]));
  for (let i = 0; lines < targetLines; i++) {
    const u = unit(i, next);
    entries.push(...u);
    const out: string[] = [];
    for (const e of u) {
      arlEntries([e], "", out);
      out.push("");
    }
    lines += out.length;
  }
  const files = {
    arl: { main: mainArl(), common: arlFile([], common(), "Imported by main.arl.") },
    yaml: {
      main: yamlFile(
        [{ path: "./common.yaml", as: "common" }],
        entries,
        "Front-end benchmark spec (YAML version of main.arl).",
      ),
      common: yamlFile(null, common(), "Imported by main.yaml."),
    },
  };
  const dir = mkdtempSync(path.join(tmpdir(), "arl-bench-"));
  const write = (name: string, content: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, content);
    return file;
  };
  const arlFiles = [write("main.arl", files.arl.main), write("common.arl", files.arl.common)];
  const yamlFiles = [write("main.yaml", files.yaml.main), write("common.yaml", files.yaml.common)];
  const sum = (xs: string[], f: (s: string) => number) => xs.reduce((n, s) => n + f(s), 0);
  const arlTexts = [files.arl.main, files.arl.common];
  const yamlTexts = [files.yaml.main, files.yaml.common];
  return {
    dir,
    arlEntry: at(arlFiles, 0),
    arlFiles,
    yamlFiles,
    arlLines: sum(arlTexts, lineCount),
    arlBytes: sum(arlTexts, (s) => Buffer.byteLength(s)),
    yamlLines: sum(yamlTexts, lineCount),
    yamlBytes: sum(yamlTexts, (s) => Buffer.byteLength(s)),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

// --- the section --------------------------------------------------------------------------------

/** What one YAML + ajv run does: read each file, parse it, validate it. */
function loadYaml(files: readonly string[], validate: ValidateFunction): unknown[] {
  return files.map((file) => {
    const data: unknown = YAML.parse(readFileSync(file, "utf8"));
    if (!validate(data))
      throw new Error(
        `${path.basename(file)} does not match the schema: ${JSON.stringify(validate.errors?.slice(0, 3))}`,
      );
    return data;
  });
}

/**
 * experiments/findmax-ablations.arl with its experiments renamed, repeated to about `lines` lines;
 * `lockedFile` is the same text with its lock file beside it (the check then builds and hashes
 * every plan and compares them).
 */
function validSpec(lines: number): {
  file: string;
  lockedFile: string;
  lines: number;
  bytes: number;
  experiments: number;
  variants: number;
  dispose(): void;
} {
  const source = readFileSync(
    fileURLToPath(new URL("../../experiments/findmax-ablations.arl", import.meta.url)),
    "utf8",
  );
  const [head, ...rest] = source.split(/^(?=experiment )/m);
  const imports = defined(head, "the text before the first experiment")
    .split("\n")
    .filter((l) => l.startsWith("import "))
    .join("\n");
  const body = rest.join("");
  const perCopy = body.split("\n").length;
  const copies = Math.max(1, Math.round(lines / perCopy));
  const parts = [imports, ""];
  for (let i = 0; i < copies; i++) parts.push(body.replace(/\b(findmax_(?:grpo|baselines|reductions))\b/g, `$1_${i}`));
  const text = parts.join("\n");
  const dir = mkdtempSync(path.join(tmpdir(), "arl-bench-valid-"));
  const file = path.join(dir, "valid.arl");
  writeFileSync(file, text);
  const lockedFile = path.join(dir, "locked.arl");
  writeFileSync(lockedFile, text);
  const model = analyze(new ModuleLoader().load(lockedFile));
  writeFileSync(
    lockPath(lockedFile),
    renderLock(buildLock(lockedFile, lowerModel(model, loweringContext(model.program)).plans)),
  );
  const experiments = copies * (body.match(/^experiment /gm)?.length ?? 0);
  return {
    file,
    lockedFile,
    lines: text.split("\n").length,
    bytes: Buffer.byteLength(text),
    experiments,
    variants: copies * 7,
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

const LOAD_GOAL = 1.0;
const CHECK_GOAL = 1.5;

/** Instruction counts of one warm run of each case (one warm-up first), and their ratios. */
function instructionRows(
  arlEntry: string,
  yamlFiles: readonly string[],
  validFile: string,
  lockedFile: string,
): BenchResult[] {
  const child = new URL("./frontend-instructions-child.js", import.meta.url);
  const count = (kase: FrontendJob["case"], files: readonly string[]) =>
    instructionsPerRun(child, (runs) => [JSON.stringify({ case: kase, runs, files } satisfies FrontendJob)], 1);
  const load = count("arl-load", [arlEntry]);
  const yaml = count("yaml-ajv", yamlFiles);
  const check = count("arl-check", [validFile]);
  const locked = count("arl-check", [lockedFile]);
  const note = "callgrind Ir of one warm run (after one warm-up), node --single-threaded";
  const ratio = (name: string, value: number, goal: number): BenchResult => ({
    name,
    value,
    unit: "x",
    goal: `<= ${goal.toFixed(1)}`,
    met: value <= goal,
  });
  return [
    { name: "instructions: ARL load", value: load, unit: " Ir", note },
    { name: "instructions: YAML + ajv", value: yaml, unit: " Ir", note },
    { name: "instructions: ARL full check", value: check, unit: " Ir", note },
    {
      name: "instructions: ARL full check, lock file",
      value: locked,
      unit: " Ir",
      note: `${note}; every plan built, hashed and compared`,
    },
    ratio("instruction ratio ARL load / (YAML + ajv)", load / yaml, LOAD_GOAL),
    ratio("instruction ratio full check / (YAML + ajv)", check / yaml, CHECK_GOAL),
    ratio("instruction ratio full check with lock / (YAML + ajv)", locked / yaml, CHECK_GOAL),
  ];
}

export function frontendSection(
  options: MeasureOptions = defaultMeasureOptions,
  targetLines = 10_000,
  instructions = false,
): BenchSection {
  let corpus: Corpus | undefined;
  const get = () => (corpus ??= writeCorpus(targetLines));
  return {
    name: "front end: ARL vs YAML + ajv",
    describe() {
      const c = get();
      return [
        `spec: ${c.arlLines.toLocaleString("en-US")} ARL lines (${(c.arlBytes / 1024).toFixed(0)} KiB, entry + 1 import); ` +
          `the same content as YAML: ${c.yamlLines.toLocaleString("en-US")} lines (${(c.yamlBytes / 1024).toFixed(0)} KiB, 2 files)`,
        `${options.warmup} warm-up + ${options.runs} measured runs per case; median shown. File reads are inside every timed run.`,
        "The headline cases run interleaved with YAML + ajv (ARL, YAML, ARL, YAML, ...); each ratio is the median of the per-pair ratios, min and max in their columns, IQR in the note.",
        instructions
          ? "--instructions: each headline case also counted under valgrind --tool=callgrind (see src/bench/instructions.ts; minutes)."
          : "(npm run bench -- --instructions adds instruction counts under valgrind, which do not move with the machine's load)",
        "ARL = new ModuleLoader().load(entry): read + lex + parse + CST->AST + import resolution, fresh loader per run.",
        "YAML + ajv = read + yaml.parse + validate, both files; the ajv schema is compiled once, outside the timed runs (its compile time is its own row).",
      ];
    },
    async run() {
      const c = get();
      let disposeValid = (): void => undefined;
      try {
        // Both sides must accept their input before anything is timed.
        const program = new ModuleLoader().load(c.arlEntry);
        if (program.diagnostics.length > 0 || program.modules.size !== 2) {
          const first = program.diagnostics[0];
          throw new Error(
            `generated ARL spec has ${program.diagnostics.length} diagnostic(s)${first ? `, first: ${first.message} at line ${first.range.start.line}` : ""}`,
          );
        }
        const schema = yamlSchema();
        const validate = new Ajv({ allErrors: false, allowUnionTypes: true }).compile(schema);
        loadYaml(c.yamlFiles, validate);

        const arlTexts = c.arlFiles.map((f) => readFileSync(f, "utf8"));
        const yamlTexts = c.yamlFiles.map((f) => readFileSync(f, "utf8"));
        const yamlData = yamlTexts.map((t) => YAML.parse(t) as unknown);
        const arlWork = { lines: c.arlLines, bytes: c.arlBytes };
        const yamlWork = { lines: c.yamlLines, bytes: c.yamlBytes };

        const results: BenchResult[] = [];
        const yamlCase = {
          name: "YAML + ajv: read + parse + validate",
          fn: () => loadYaml(c.yamlFiles, validate),
          work: { ...yamlWork, note: "headline" },
        };
        const load = await paired(
          {
            name: "ARL: load (lex + parse + AST + imports)",
            fn: () => new ModuleLoader().load(c.arlEntry),
            work: { ...arlWork, note: "headline" },
          },
          yamlCase,
          { name: "ratio ARL / (YAML + ajv)", goal: `<= ${LOAD_GOAL.toFixed(1)}`, limit: LOAD_GOAL },
          options,
        );
        results.push(load.a, load.b, load.ratio, load.cpuRatio);

        // The whole check a user runs: front end, semantic model (extends, variants, zod
        // schemas), lint rules and plan lowering with the lock check; diagnostics included.
        // On a spec that is valid all the way (the generated one above is valid syntax only):
        // the findMax experiments of experiments/ repeated under new names to the same size.
        const valid = validSpec(c.arlLines);
        disposeValid = () => valid.dispose();
        const validErrors = new Compiler().check(valid.file).diagnostics.filter((d) => d.severity === "error");
        if (validErrors.length > 0)
          throw new Error(`the valid benchmark spec has errors, first: ${at(validErrors, 0).message}`);
        const check = await paired(
          {
            name: "ARL: full arl check (types, lint, plans)",
            fn: () => new Compiler().check(valid.file),
            work: {
              lines: valid.lines,
              bytes: valid.bytes,
              note: `${valid.experiments} experiments, ${valid.variants} variants`,
            },
          },
          { ...yamlCase, work: { ...yamlWork, note: "paired with the check" } },
          {
            name: "ratio full check / (YAML + ajv)",
            goal: `<= ${CHECK_GOAL.toFixed(1)}`,
            limit: CHECK_GOAL,
            note: "YAML + ajv checks types only; the check also lints and lowers every variant",
          },
          options,
        );
        results.push(check.a, check.b, check.ratio, check.cpuRatio);
        const lockedErrors = new Compiler().check(valid.lockedFile).diagnostics.filter((d) => d.severity === "error");
        if (lockedErrors.length > 0)
          throw new Error(`the locked benchmark spec has errors, first: ${at(lockedErrors, 0).message}`);
        const locked = await paired(
          {
            name: "ARL: full check with a lock file",
            fn: () => new Compiler().check(valid.lockedFile),
            work: {
              lines: valid.lines,
              bytes: valid.bytes,
              note: "every plan built, hashed and compared with the lock",
            },
          },
          { ...yamlCase, work: { ...yamlWork, note: "paired with the locked check" } },
          { name: "ratio full check with lock / (YAML + ajv)", goal: `<= ${CHECK_GOAL.toFixed(1)}`, limit: CHECK_GOAL },
          options,
        );
        results.push(locked.a, locked.b, locked.ratio, locked.cpuRatio);
        if (instructions) {
          if (!valgrindAvailable())
            throw new Error("--instructions needs valgrind on the PATH (apt-get install valgrind)");
          results.push(...instructionRows(c.arlEntry, c.yamlFiles, valid.file, valid.lockedFile));
        }

        // Breakdowns: where each side's time goes (texts already in memory).
        results.push(
          await timed("  ARL lex only", () => arlTexts.map((t, k) => lex(t, at(c.arlFiles, k))), arlWork, options),
          await timed(
            "  ARL lex + CST parse",
            () =>
              arlTexts.map((t, k) => {
                parser.input = lex(t, at(c.arlFiles, k)).tokens;
                return parser.document();
              }),
            arlWork,
            options,
          ),
          await timed(
            "  ARL parse() (lex + CST + AST)",
            () => arlTexts.map((t, k) => parse(t, at(c.arlFiles, k))),
            arlWork,
            options,
          ),
          await timed("  yaml.parse only", () => yamlTexts.map((t) => YAML.parse(t) as unknown), yamlWork, options),
          await timed("  ajv validate only", () => yamlData.map((d) => validate(d)), yamlWork, options),
          await timed(
            "  ajv compile (not in the headline)",
            () => new Ajv({ allErrors: false, allowUnionTypes: true }).compile(schema),
            {},
            options,
          ),
        );
        consume(results);
        return results;
      } finally {
        disposeValid();
        c.dispose();
        corpus = undefined;
      }
    },
  };
}
