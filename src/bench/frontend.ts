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
import { mulberry32 as rng } from "../contracts/random.js";
import { ModuleLoader } from "../language/imports.js";
import { lex } from "../language/lexer.js";
import { parse } from "../language/parse.js";
import { parser } from "../language/parser.js";
import { consume, defaultMeasureOptions, timed, type BenchResult, type BenchSection, type MeasureOptions } from "./harness.js";

// --- a small spec model, printed both as ARL and as a plain object for YAML ---------------------

type Value =
  | { readonly t: "num"; readonly raw: string }
  | { readonly t: "str"; readonly v: string; readonly triple?: boolean }
  | { readonly t: "bool"; readonly v: boolean }
  | { readonly t: "none" }
  /** An ARL expression (reference, call, arithmetic); YAML users write these as strings. */
  | { readonly t: "expr"; readonly src: string }
  | { readonly t: "list"; readonly items: readonly Value[] }
  | { readonly t: "rec"; readonly entries: readonly Entry[] };

interface FieldEntry {
  readonly t: "field";
  readonly path: readonly string[];
  readonly value: Value;
  readonly doc?: string;
  readonly comment?: string;
}

interface BlockEntry {
  readonly t: "block";
  readonly type: string;
  readonly name?: string;
  readonly ext?: string;
  readonly entries: readonly Entry[];
  readonly doc?: string;
  /** Printed on one line: `type { a: 1, b: 2 }`. */
  readonly inline?: boolean;
  /** Dotted paths stay dotted keys in YAML (Hydra override syntax), as in sweeps and ablations. */
  readonly overrides?: boolean;
}

type Entry = FieldEntry | BlockEntry;

const num = (raw: string | number): Value => ({ t: "num", raw: String(raw) });
const str = (v: string): Value => ({ t: "str", v });
const text = (v: string): Value => ({ t: "str", v, triple: true });
const bool = (v: boolean): Value => ({ t: "bool", v });
const ex = (src: string): Value => ({ t: "expr", src });
const list = (...items: Value[]): Value => ({ t: "list", items });
const rec = (...entries: Entry[]): Value => ({ t: "rec", entries });
const field = (p: string, value: Value, extra: { doc?: string; comment?: string } = {}): FieldEntry => ({ t: "field", path: p.split("."), value, ...extra });
const block = (type: string, entries: Entry[], extra: Omit<BlockEntry, "t" | "type" | "entries"> = {}): BlockEntry => ({ t: "block", type, entries, ...extra });

function common(): Entry[] {
  return [
    block(
      "env",
      [
        field("kind", str("subprocess")),
        field("timeout_s", num(30)),
        block("split", [field("train", num("0.8")), field("valid", num("0.1")), field("test", num("0.1"))], { inline: true }),
      ],
      { name: "base_env", doc: "Defaults shared by every task family." },
    ),
    block(
      "experiment",
      [
        field("seed", num(0)),
        block("policy", [field("model", str("builtin:tiny")), block("sampling", [field("temperature", num("1.0"))], { inline: true })]),
        block("resources", [field("backend", ex("local"))], { inline: true }),
      ],
      { name: "base_experiment", doc: "Defaults shared by every experiment." },
    ),
  ];
}

const estimators = ["grpo", "rloo", "ppo", "reinforce", "dr_grpo"];
const models = ["hf:Qwen/Qwen2.5-1.5B-Instruct", "hf:Qwen/Qwen2.5-7B-Instruct", "builtin:tiny", "hf:meta-llama/Llama-3.1-8B-Instruct"];

/** One task family: two tools, an environment and an experiment (about 110 ARL lines). */
function unit(i: number, next: () => number): Entry[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const tests = `run_tests_${i}`;
  const reader = `read_file_${i}`;
  const family = `family_${i}`;
  const temperature = (0.5 + Math.floor(next() * 6) / 10).toFixed(1);
  const group = pick([4, 8, 16]);
  const turns = 6 + (i % 10);
  const out: Entry[] = [
    block(
      "tool",
      [
        field("description", text(`Run the unit tests of the current solution for family ${i}\nand report which ones fail, with the first assertion message.\nCall it after every edit; it never changes the files.`)),
        block("parameters", [
          block("path", [field("type", str("string")), field("description", str(`File to test, relative to the task root (family ${i}).`))], { inline: true }),
          block("timeout_s", [field("type", str("integer")), field("minimum", num(1)), field("maximum", num(600)), field("default", num(30 + (i % 5) * 10))], { inline: true }),
          block("verbose", [field("type", str("boolean")), field("default", bool(false))], { inline: true }),
          block("filter", [field("type", str("array")), field("items", rec(field("type", str("string")))), field("description", str('Only tests whose name contains one of these, e.g. "edge\\case".'))]),
        ]),
        field("returns", str("text")),
      ],
      { name: tests, doc: `Runs the test-suite of task family ${i}.\nThe output is truncated by the harness, not by the tool.` },
    ),
    block(
      "tool",
      [
        field("description", str(`Read one file of the workspace of family ${i}.\nReturns "<missing>" when there is no such file.`)),
        block("parameters", [block("path", [field("type", str("string"))], { inline: true }), block("max_bytes", [field("type", str("integer")), field("minimum", num(1)), field("default", num("65_536"))], { inline: true })]),
        field("returns", str("text")),
      ],
      { name: reader },
    ),
    block(
      "env",
      [
        field("kind", str("subprocess")),
        field("command", list(str("python"), str("-m"), str(`envs.${family}`), str("--seed"), str(String(i)))),
        field("timeout_s", num(60 + (i % 4) * 30), { comment: "slow machines need more" }),
        block("split", [field("train", num("0.8")), field("valid", num("0.1")), field("test", num("0.1"))], { inline: true, doc: "Disjoint by task id." }),
        block("signals", [
          field("tests_passed", str("bool")),
          field("progress", str("float")),
          field("tool_calls", str("int")),
          field('"pass@1"', str("float")),
        ]),
        block("params", [field("difficulty", num(i % 3)), field("language", str("python")), field("strict", bool(i % 2 === 0))], { inline: true }),
        field("optimal_length", num(3 + (i % 9))),
        field("tools", list(ex(tests), ex(reader))),
      ],
      { name: family, ext: "common.base_env", doc: `Task family ${i}: repair a function until its tests pass.` },
    ),
  ];

  const experiment: Entry[] = [
    field("description", str(`${pick(estimators).toUpperCase()} on family ${i}: outcome reward, shaped progress, tool output masked`)),
    field("seed", num(i)),
    block("policy", [
      field("model", str(pick(models))),
      block("sampling", [field("temperature", num(temperature)), field("top_p", num("0.95")), field("max_new_tokens", num("1_024"))], { inline: true }),
    ]),
    block("env", [field("split.test", num("0.2")), field("weight", num("1.0"))], { name: "main", ext: family }),
    ...(i > 0 ? [block("env", [field("weight", num("0.5"))], { name: "aux", ext: `family_${i - 1}`, inline: true })] : []),
    block("harness", [
      field("tools", list(ex(tests), ex(reader))),
      field("format", ex(pick(["function_call", "text_action"]))),
      field("max_turns", num(turns)),
      field("max_response_tokens", num(2048)),
      field("on_budget", ex(pick(["truncate", "terminate"]))),
      block("observation", [field("max_tokens", num(256)), field("overflow", ex("keep_head"))], { inline: true }),
      field(
        "system_prompt",
        text(`You are repairing a function in task family ${i}.\nRead the code first, then run the tests.\nChange as little as you can; explain nothing.\nStop when every test passes.`),
      ),
    ]),
    block(
      "reward",
      [
        field("success", ex("1.0 * outcome.tests_passed"), { doc: "1 when every test passes, 0 otherwise." }),
        field("progress", ex(`potential(0.${1 + (i % 9)} * state.progress)`), { doc: "Potential-based: keeps the ranking of policies." }),
        field("abnormal", ex("-0.2 when episode.aborted and not outcome.tests_passed")),
        field("cost", ex("-0.02 * episode.tool_calls")),
        field("length", ex("-(episode.tokens - 1_024) / 4096 when episode.tokens > 1_024")),
        field("bonus", ex("0.1 * (state.progress >= 0.5 or outcome.partial)"), { comment: "small on purpose" }),
      ],
      { doc: "Outcome first; shaping terms are potential-based." },
    ),
    block("constraints", [field("no_writes", ex('block(tool.name == "execute")')), field("max_calls", ex("block(episode.tool_calls > 64)"))]),
    block("mask", [field("loss", ex("generated")), field("keep_sampling", bool(true))], { inline: true }),
    block("algorithm", [
      field("estimator", ex(pick(estimators))),
      field("group_size", num(group)),
      block("advantage", [field("baseline", ex("leave_one_out")), field("normalize", bool(true)), field("task_norm", bool(false)), field("gamma", num("1.0")), field("lambda", num("0.95"))], { inline: true }),
      block("clip", [field("low", num("0.2")), field("high", num("0.28")), field("dual", num("3.0"))], { inline: true }),
      block("kl", [field("coef", num("1e-3")), field("estimator", ex("k3")), field("placement", ex("loss")), field("reference", ex("initial"))], { inline: true }),
      block("optimizer", [field("lr", num("5e-7")), field("weight_decay", num("0.0")), field("betas", list(num("0.9"), num("0.999"))), field("schedule", ex("cosine(warmup: 10, min_ratio: 0.1)"))]),
      block("critic", [block("optimizer", [field("lr", num("5e-6"))], { inline: true })]),
      field("reduction", ex("constant(1024)")),
      field("epochs", num(1)),
      field("minibatches", num(4)),
    ]),
    field("algorithm.kl.coef", num("0.001"), { comment: "override after the block" }),
    block("rollout", [field("tasks_per_batch", num(16)), field("iterations", num(40 + (i % 5) * 10)), field("concurrency", num(32)), block("async", [field("max_policy_lag", num(1))], { inline: true })]),
    block("eval", [field("split", ex("test")), field("every", num(10)), field("episodes", num(64)), field("k", list(num(1), num(4), num(8))), field("seeds", list(num(1), num(2), num(3)))], { inline: true }),
    block("resources", [field("backend", ex("torch")), field("gpus", num(8)), field("launcher", str("torchrun"))], { inline: true }),
    block("allow", [field("self-inclusive-baseline", str("matching the original GRPO objective"))]),
    block("sweep", [field("harness.max_turns", list(num(turns), num(turns * 2))), field("algorithm.group_size", list(num(4), num(8)))], { overrides: true }),
    block("ablation", [
      block("full", [], { overrides: true, inline: true }),
      block("no_task_norm", [field("algorithm.advantage.task_norm", bool(true))], { overrides: true, inline: true }),
      block("no_shaping", [field("reward.progress", num(0)), field("reward.bonus", num(0))], { overrides: true }),
    ]),
  ];
  out.push(block("experiment", experiment, { name: `exp_${i}`, ext: "common.base_experiment", doc: `Experiment ${i}: the family's standard recipe.` }));
  if (i % 10 === 9) {
    out.push(block("experiment", [field("algorithm.advantage.baseline", ex("mean")), field("policy.sampling.temperature", num("1.0"))], { name: `exp_${i}_mean`, ext: `exp_${i}`, doc: "Mean baseline instead of leave-one-out." }));
  }
  return out;
}

// --- printing -------------------------------------------------------------------------------------

function arlValue(v: Value, indent: string): string {
  switch (v.t) {
    case "num":
      return v.raw;
    case "str":
      if (!v.triple) return JSON.stringify(v.v);
      return `"""\n${v.v
        .split("\n")
        .map((line) => `${indent}  ${line}`)
        .join("\n")}\n${indent}  """`;
    case "bool":
      return String(v.v);
    case "none":
      return "none";
    case "expr":
      return v.src;
    case "list":
      return `[${v.items.map((item) => arlValue(item, indent)).join(", ")}]`;
    case "rec":
      return `{ ${v.entries.map((e) => arlInline(e, indent)).join(", ")} }`;
  }
}

function arlInline(e: Entry, indent: string): string {
  if (e.t === "field") return `${e.path.join(".")}: ${arlValue(e.value, indent)}`;
  const inner = e.entries.map((x) => arlInline(x, indent)).join(", ");
  return `${header(e)} {${inner ? ` ${inner} ` : ""}}`;
}

function header(b: BlockEntry): string {
  return `${b.type}${b.name ? ` ${b.name}` : ""}${b.ext ? ` extends ${b.ext}` : ""}`;
}

function arlEntries(entries: readonly Entry[], indent: string, out: string[]): void {
  for (const e of entries) {
    if (e.doc) for (const line of e.doc.split("\n")) out.push(`${indent}/// ${line}`);
    if (e.t === "field") {
      out.push(`${indent}${e.path.join(".")}: ${arlValue(e.value, indent)}${e.comment ? ` // ${e.comment}` : ""}`);
    } else if (e.inline) {
      out.push(`${indent}${arlInline(e, indent)}`);
    } else {
      out.push(`${indent}${header(e)} {`);
      arlEntries(e.entries, `${indent}  `, out);
      out.push(`${indent}}`);
    }
  }
}

function arlFile(imports: readonly string[], entries: readonly Entry[], banner: string): string {
  const out = [`// ${banner}`, "/* Generated by src/bench/frontend.ts: deterministic, never edited by hand. */", ...imports, ""];
  for (const e of entries) {
    arlEntries([e], "", out);
    out.push("");
  }
  return out.join("\n");
}

type Plain = null | boolean | number | string | Plain[] | { [key: string]: Plain };
type PlainObject = { [key: string]: Plain };

interface YamlComment {
  readonly path: readonly string[];
  readonly before?: string;
  readonly after?: string;
}

function plainValue(v: Value, at: string[], comments: YamlComment[]): Plain {
  switch (v.t) {
    case "num":
      return Number(v.raw.replace(/_/g, ""));
    case "str":
      return v.v;
    case "bool":
      return v.v;
    case "none":
      return null;
    case "expr":
      return v.src;
    case "list":
      return v.items.map((item, k) => plainValue(item, [...at, String(k)], comments));
    case "rec":
      return plainEntries(v.entries, {}, at, comments, false);
  }
}

function unquote(key: string): string {
  return key.startsWith('"') ? (JSON.parse(key) as string) : key;
}

/** Entries -> nested object: a dotted path sets one nested field, unless `overrides` keeps it dotted. */
function plainEntries(entries: readonly Entry[], into: PlainObject, at: string[], comments: YamlComment[], overrides: boolean): PlainObject {
  for (const e of entries) {
    if (e.t === "field") {
      const keys = overrides ? [e.path.map(unquote).join(".")] : e.path.map(unquote);
      let target = into;
      for (const k of keys.slice(0, -1)) {
        const next = target[k];
        if (next && typeof next === "object" && !Array.isArray(next)) target = next;
        else target = target[k] = {};
      }
      const last = keys[keys.length - 1]!;
      const p = [...at, ...keys];
      target[last] = plainValue(e.value, p, comments);
      if (e.doc || e.comment) comments.push({ path: p, ...(e.doc ? { before: e.doc } : {}), ...(e.comment ? { after: e.comment } : {}) });
      continue;
    }
    let target: PlainObject;
    let p: string[];
    if (e.name) {
      const group = (into[e.type] ??= {}) as PlainObject;
      target = (group[e.name] ??= {}) as PlainObject;
      p = [...at, e.type, e.name];
    } else {
      target = (into[e.type] ??= {}) as PlainObject;
      p = [...at, e.type];
    }
    if (e.ext) target.extends = e.ext;
    plainEntries(e.entries, target, p, comments, e.overrides === true);
    if (e.doc) comments.push({ path: p, before: e.doc });
  }
  return into;
}

function yamlFile(imports: Plain, entries: readonly Entry[], banner: string): string {
  const comments: YamlComment[] = [];
  const root: PlainObject = imports === null ? {} : { imports };
  plainEntries(entries, root, [], comments, false);
  const doc = new YAML.Document(root);
  doc.commentBefore = ` ${banner}\n Generated by src/bench/frontend.ts: deterministic, never edited by hand.`;
  for (const c of comments) {
    const parent = doc.getIn(c.path.slice(0, -1));
    if (!YAML.isMap(parent)) continue;
    const pair = parent.items.find((item) => YAML.isScalar(item.key) && item.key.value === c.path[c.path.length - 1]);
    if (!pair) continue;
    if (c.before && YAML.isScalar(pair.key)) {
      pair.key.commentBefore = c.before
        .split("\n")
        .map((line) => ` ${line}`)
        .join("\n");
    }
    if (c.after && YAML.isScalar(pair.value)) pair.value.comment = ` ${c.after}`;
  }
  // Short lists of scalars in flow style, `k: [1, 4, 8]`, as people write them by hand.
  YAML.visit(doc, {
    Seq(_, node) {
      if (node.items.every((item) => YAML.isScalar(item))) node.flow = true;
    },
  });
  return doc.toString({ lineWidth: 0 });
}

// --- the JSON Schema a YAML user would write for these files ---------------------------------------

const obj = (properties: Record<string, object>, extra: object = {}): object => ({ type: "object", additionalProperties: false, properties, ...extra });
const mapOf = (values: object): object => ({ type: "object", additionalProperties: values });
const S = { type: "string" };
const N = { type: "number" };
const I = { type: "integer" };
const B = { type: "boolean" };
const numOrExpr = { type: ["number", "string"] };

export function yamlSchema(): object {
  const sampling = obj({ temperature: N, top_p: N, top_k: I, max_new_tokens: I });
  const split = obj({ train: N, valid: N, test: N });
  const toolParam = obj(
    { type: { enum: ["string", "number", "integer", "boolean", "array", "object"] }, description: S, minimum: N, maximum: N, default: {}, items: { type: "object" }, enum: { type: "array" } },
    { required: ["type"] },
  );
  const env = obj({
    extends: S,
    kind: { enum: ["builtin", "subprocess", "server"] },
    command: { type: "array", items: S },
    timeout_s: I,
    split,
    signals: mapOf({ enum: ["bool", "int", "float"] }),
    params: mapOf({ type: ["number", "string", "boolean"] }),
    optimal_length: I,
    tools: { type: "array", items: S },
    weight: N,
  });
  const tool = obj({ extends: S, description: S, parameters: mapOf(toolParam), returns: S }, { required: ["description"] });
  const optimizer = obj({ lr: N, weight_decay: N, betas: { type: "array", items: N, minItems: 2, maxItems: 2 }, schedule: S });
  const experiment = obj({
    extends: S,
    description: S,
    seed: I,
    policy: obj({ model: S, chat_template: S, sampling, reference: S }),
    env: mapOf(env),
    harness: obj({
      tools: { type: "array", items: S },
      format: { enum: ["function_call", "text_action"] },
      max_turns: { type: "integer", minimum: 1 },
      max_response_tokens: I,
      on_budget: { enum: ["truncate", "terminate"] },
      observation: obj({ max_tokens: I, overflow: { enum: ["keep_head", "keep_tail", "error"] } }),
      system_prompt: S,
    }),
    reward: mapOf(numOrExpr),
    constraints: mapOf(S),
    mask: obj({ loss: S, keep_sampling: B }),
    algorithm: obj({
      estimator: { enum: ["ppo", "grpo", "rloo", "reinforce", "dr_grpo"] },
      group_size: { type: "integer", minimum: 1 },
      advantage: obj({ baseline: S, normalize: B, task_norm: B, gamma: N, lambda: N }),
      clip: obj({ low: N, high: N, dual: N }),
      kl: obj({ coef: N, estimator: S, placement: S, reference: S }),
      optimizer,
      critic: obj({ optimizer }),
      reduction: S,
      epochs: I,
      minibatches: I,
    }),
    rollout: obj({ tasks_per_batch: I, iterations: I, concurrency: I, async: obj({ max_policy_lag: I }) }),
    eval: obj({ split: S, every: I, episodes: I, k: { type: "array", items: I }, seeds: { type: "array", items: I } }),
    resources: obj({ backend: { enum: ["local", "torch"] }, gpus: I, launcher: S }),
    allow: mapOf(S),
    sweep: mapOf({ type: "array", minItems: 1 }),
    ablation: mapOf({ type: "object" }),
  });
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    ...obj({
      imports: { type: "array", items: obj({ path: S, as: S }, { required: ["path"] }) },
      env: mapOf(env),
      tool: mapOf(tool),
      experiment: mapOf(experiment),
    }),
  };
}

// --- the corpus -----------------------------------------------------------------------------------

export interface Corpus {
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
export function writeCorpus(targetLines = 10_000): Corpus {
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
      main: yamlFile([{ path: "./common.yaml", as: "common" }], entries, "Front-end benchmark spec (YAML version of main.arl)."),
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
    arlEntry: arlFiles[0]!,
    arlFiles,
    yamlFiles,
    arlLines: sum(arlTexts, lineCount),
    arlBytes: sum(arlTexts, Buffer.byteLength),
    yamlLines: sum(yamlTexts, lineCount),
    yamlBytes: sum(yamlTexts, Buffer.byteLength),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

// --- the section --------------------------------------------------------------------------------

/** What one YAML + ajv run does: read each file, parse it, validate it. */
function loadYaml(files: readonly string[], validate: ValidateFunction): unknown[] {
  return files.map((file) => {
    const data: unknown = YAML.parse(readFileSync(file, "utf8"));
    if (!validate(data)) throw new Error(`${path.basename(file)} does not match the schema: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
    return data;
  });
}

/** experiments/findmax-ablations.arl with its experiments renamed, repeated to about `lines` lines. */
function validSpec(lines: number): { file: string; lines: number; bytes: number; experiments: number; variants: number } {
  const source = readFileSync(fileURLToPath(new URL("../../experiments/findmax-ablations.arl", import.meta.url)), "utf8");
  const [head, ...rest] = source.split(/^(?=experiment )/m);
  const imports = head!.split("\n").filter((l) => l.startsWith("import ")).join("\n");
  const body = rest.join("");
  const perCopy = body.split("\n").length;
  const copies = Math.max(1, Math.round(lines / perCopy));
  const parts = [imports, ""];
  for (let i = 0; i < copies; i++) parts.push(body.replace(/\b(findmax_(?:grpo|baselines|reductions))\b/g, `$1_${i}`));
  const text = parts.join("\n");
  const dir = mkdtempSync(path.join(tmpdir(), "arl-bench-valid-"));
  const file = path.join(dir, "valid.arl");
  writeFileSync(file, text);
  const experiments = copies * (body.match(/^experiment /gm)?.length ?? 0);
  return { file, lines: text.split("\n").length, bytes: Buffer.byteLength(text), experiments, variants: copies * 7 };
}

export function frontendSection(options: MeasureOptions = defaultMeasureOptions, targetLines = 10_000): BenchSection {
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
        "ARL = new ModuleLoader().load(entry): read + lex + parse + CST->AST + import resolution, fresh loader per run.",
        "YAML + ajv = read + yaml.parse + validate, both files; the ajv schema is compiled once, outside the timed runs (its compile time is its own row).",
      ];
    },
    async run() {
      const c = get();
      try {
        // Both sides must accept their input before anything is timed.
        const program = new ModuleLoader().load(c.arlEntry);
        if (program.diagnostics.length > 0 || program.modules.size !== 2) {
          const first = program.diagnostics[0];
          throw new Error(`generated ARL spec has ${program.diagnostics.length} diagnostic(s)${first ? `, first: ${first.message} at line ${first.range.start.line}` : ""}`);
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
        const arl = await timed("ARL: load (lex + parse + AST + imports)", () => new ModuleLoader().load(c.arlEntry), { ...arlWork, note: "headline" }, options);
        const yaml = await timed("YAML + ajv: read + parse + validate", () => loadYaml(c.yamlFiles, validate), { ...yamlWork, note: "headline" }, options);
        results.push(arl, yaml);
        const ratio = arl.medianMs! / yaml.medianMs!;
        results.push({ name: "ratio ARL / (YAML + ajv)", value: ratio, unit: "x", goal: "<= 1.0", met: ratio <= 1.0 });

        // The whole check a user runs: front end, semantic model (extends, variants, zod
        // schemas), lint rules and plan lowering with the lock check; diagnostics included.
        // On a spec that is valid all the way (the generated one above is valid syntax only):
        // the findMax experiments of experiments/ repeated under new names to the same size.
        const valid = validSpec(c.arlLines);
        const validErrors = new Compiler().check(valid.file).diagnostics.filter((d) => d.severity === "error");
        if (validErrors.length > 0) throw new Error(`the valid benchmark spec has errors, first: ${validErrors[0]!.message}`);
        const check = await timed("ARL: full arl check (types, lint, plans)", () => new Compiler().check(valid.file), { lines: valid.lines, bytes: valid.bytes, note: `${valid.experiments} experiments, ${valid.variants} variants` }, options);
        results.push(check);
        const checkRatio = check.medianMs! / yaml.medianMs!;
        results.push({ name: "ratio full check / (YAML + ajv)", value: checkRatio, unit: "x", note: "YAML + ajv checks types only; the check also lints and lowers every variant" });

        // Breakdowns: where each side's time goes (texts already in memory).
        results.push(
          await timed("  ARL lex only", () => arlTexts.map((t, k) => lex(t, c.arlFiles[k]!)), arlWork, options),
          await timed(
            "  ARL lex + CST parse",
            () =>
              arlTexts.map((t, k) => {
                parser.input = lex(t, c.arlFiles[k]!).tokens;
                return parser.document();
              }),
            arlWork,
            options,
          ),
          await timed("  ARL parse() (lex + CST + AST)", () => arlTexts.map((t, k) => parse(t, c.arlFiles[k]!)), arlWork, options),
          await timed("  yaml.parse only", () => yamlTexts.map((t) => YAML.parse(t) as unknown), yamlWork, options),
          await timed("  ajv validate only", () => yamlData.map((d) => validate(d)), yamlWork, options),
          await timed("  ajv compile (not in the headline)", () => new Ajv({ allErrors: false, allowUnionTypes: true }).compile(schema), {}, options),
        );
        consume(results);
        return results;
      } finally {
        c.dispose();
        corpus = undefined;
      }
    },
  };
}
