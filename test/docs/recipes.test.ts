// The invariants CONTRIBUTING.md's recipes rely on, checked over the whole tree: a change that
// followed a recipe only half way (a rule without fixtures, an env kind the runtime cannot run,
// a protocol method one trainer lacks, a benchmark nobody calls) fails here, naming what is
// missing. The field-by-field checks of the block-field recipe live in
// test/docs/language-reference.test.ts and test/plan/schema.test.ts.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { explain } from "../../src/cli/commands/explain.js";
import { opNames } from "../../src/conformance/index.js";
import { envKinds as runtimeEnvKinds } from "../../src/envs/registry.js";
import { lintRules } from "../../src/lint/index.js";
import { KINDS_WITH_WALKTHROUGHS } from "../../src/plan/runnable.js";
import { planSchema } from "../../src/plan/schema.js";
import { envKinds } from "../../src/semantics/schema/env.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const read = (file: string) => readFileSync(path.join(repo, file), "utf8");
const contributing = read("CONTRIBUTING.md");

/** Whether a source text names `name` as a string literal or an object key. */
function names(source: string, name: string): boolean {
  return new RegExp(`["']${name}["']|(^|[{,\\s])${name}\\s*:`, "m").test(source);
}

describe("CONTRIBUTING.md", () => {
  it("has the five recipes", () => {
    const recipes = [...contributing.matchAll(/^## Recipe: (.+)$/gm)].map((m) => m[1]);
    expect(recipes).toEqual([
      "add a lint rule",
      "add an env kind",
      "add a trainer operation",
      "add a block field",
      "add a benchmark",
    ]);
  });

  it("names only npm scripts the package has, and test files that exist", () => {
    const scripts = Object.keys((JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts);
    for (const [, script] of contributing.matchAll(/npm run ([\w:-]+)/g))
      expect(scripts, `npm run ${script}`).toContain(script);
    // Paths with a placeholder segment (KIND, NAME, CODE) stand for the file a recipe creates.
    const tests = [...contributing.matchAll(/`(test\/[\w./-]+\.(?:ts|py))`/g)]
      .map((m) => m[1] as string)
      .filter((t) => !/[A-Z]{3,}/.test(t));
    expect(tests.length).toBeGreaterThan(5);
    expect(tests.filter((t) => !existsSync(path.join(repo, t)))).toEqual([]);
  });
});

describe("recipe: add a lint rule", () => {
  const rulesDir = path.join(repo, "src/lint/rules");
  const files = readdirSync(rulesDir)
    .filter((f) => f.endsWith(".ts") && f !== "index.ts")
    .map((f) => f.replace(/\.ts$/, ""));

  it("every rule file is registered under its file's name", () => {
    expect(files.sort()).toEqual(lintRules.map((r) => r.code).sort());
  });

  it("every rule has triggering and clean fixtures, and the triggering ones mark what they expect", () => {
    for (const code of files) {
      const dir = path.join(repo, "test/fixtures/lint", code);
      const fixtures = existsSync(dir) ? readdirSync(dir) : [];
      const triggers = fixtures.filter((f) => f.startsWith("triggers") && f.endsWith(".arl"));
      expect(triggers.length, `${code}: test/fixtures/lint/${code}/triggers*.arl`).toBeGreaterThan(0);
      expect(
        fixtures.some((f) => f.startsWith("clean") && f.endsWith(".arl")),
        `${code}: test/fixtures/lint/${code}/clean*.arl`,
      ).toBe(true);
      const marked = triggers.some((f) => readFileSync(path.join(dir, f), "utf8").includes(`// expect: ${code}`));
      expect(marked, `${code}: a triggering fixture has an '// expect: ${code}' marker`).toBe(true);
    }
  });

  it("every rule has an `arl explain` entry with its explanation", () => {
    for (const rule of lintRules) expect(explain(rule.code)?.text, rule.code).toContain(rule.explanation);
  });
});

/** The `kind` literals of the plan's env union. */
function planEnvKinds(): string[] {
  const def = (s: unknown) =>
    (
      s as {
        def: {
          type: string;
          innerType?: unknown;
          in?: unknown;
          out?: unknown;
          valueType?: unknown;
          options?: unknown[];
          shape?: Record<string, unknown>;
          values?: unknown[];
        };
      }
    ).def;
  let env: unknown = def(planSchema.shape.envs).valueType;
  for (let i = 0; i < 10 && def(env).type !== "union"; i++) {
    const d = def(env);
    env = d.type === "pipe" ? (def(d.in).type === "transform" ? d.out : d.in) : d.innerType;
  }
  return (def(env).options ?? []).map((o) => String(def((def(o).shape ?? {}).kind).values?.[0]));
}

describe("recipe: add an env kind", () => {
  it("every kind of the semantic schema is in the plan schema and the runtime's registry, and nothing else is", () => {
    const kinds = [...envKinds].sort();
    expect(planEnvKinds().sort(), "the plan's env kinds (src/plan/schema.ts)").toEqual(kinds);
    expect([...runtimeEnvKinds.keys()].sort(), "the runtime's env registry (src/envs/registry.ts)").toEqual(kinds);
    for (const [kind, implementation] of runtimeEnvKinds)
      expect(implementation.kind, `registry entry ${kind}`).toBe(kind);
  });

  it("kinds with walkthroughs are env kinds", () => {
    expect(KINDS_WITH_WALKTHROUGHS.filter((k) => !(envKinds as readonly string[]).includes(k))).toEqual([]);
  });

  it("every kind has its tests and its heading in docs/language.md", () => {
    const language = read("docs/language.md");
    for (const kind of envKinds) {
      expect(existsSync(path.join(repo, `test/envs/${kind}.test.ts`)), `test/envs/${kind}.test.ts`).toBe(true);
      expect(language, `docs/language.md: #### \`kind: ${kind}\``).toContain(`#### \`kind: ${kind}\``);
    }
  });
});

/** The methods docs/protocol.md gives a `###` heading (`save` / `load` share one). */
function documentedMethods(): string[] {
  return [...read("docs/protocol.md").matchAll(/^### (.+)$/gm)].flatMap((m) =>
    [...(m[1] as string).matchAll(/`([a-z_]+)`/g)].map((n) => n[1] as string),
  );
}

/** The keys of the `Methods` interface of the trainer protocol's message types (wherever the layering puts them). */
function typedMethods(): string[] {
  const candidates = ["src/contracts/trainer-protocol.ts", "src/trainer/protocol/messages.ts"];
  const file = candidates.find((f) => existsSync(path.join(repo, f)) && read(f).includes("export interface Methods"));
  expect(file, `one of ${candidates.join(", ")} declares the Methods interface`).toBeDefined();
  const body = /export interface Methods \{([\s\S]*?)\n\}/.exec(read(file as string))?.[1] ?? "";
  return [...body.matchAll(/^\s+([a-z_]+): \[/gm)].map((m) => m[1] as string);
}

describe("recipe: add a trainer operation", () => {
  const methods = documentedMethods();

  it("the protocol document and the message types list the same methods", () => {
    expect(methods.length).toBeGreaterThan(10);
    expect([...typedMethods()].sort()).toEqual([...methods].sort());
  });

  it("both trainers' dispatchers name every method", () => {
    const embedded = read("src/trainer/embedded/trainer.ts");
    const torch = read("runtime-gpu/arl_trainer/trainer.py");
    expect(
      methods.filter((m) => !names(embedded, m)),
      "src/trainer/embedded/trainer.ts",
    ).toEqual([]);
    expect(
      methods.filter((m) => !names(torch, m)),
      "runtime-gpu/arl_trainer/trainer.py",
    ).toEqual([]);
  });

  // The one request schema of the protocol, written by the build from the contracts layer's zod
  // schemas and committed (test/trainer/requests.test.ts keeps it as the build writes it).
  const requestSchema = path.join(repo, "runtime-gpu/arl_trainer/protocol.schema.json");
  it("the request schema gives every method its params", () => {
    const schema = JSON.parse(readFileSync(requestSchema, "utf8")) as {
      allOf?: { if?: { properties?: { method?: { const?: string } } } }[];
    };
    const constrained = (schema.allOf ?? [])
      .map((c) => c.if?.properties?.method?.const)
      .filter((m): m is string => typeof m === "string");
    expect(constrained.sort()).toEqual([...methods].sort());
  });

  it("every conformance op has vectors and a Python implementation, and every vector names a known op", () => {
    const dir = path.join(repo, "test/conformance");
    const vectorOps = new Set(
      readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .flatMap((f) =>
          (JSON.parse(readFileSync(path.join(dir, f), "utf8")) as { cases: { op: string }[] }).cases.map((c) => c.op),
        ),
    );
    const ops: readonly string[] = opNames;
    expect(
      ops.filter((op) => !vectorOps.has(op)),
      "ops without vectors",
    ).toEqual([]);
    expect(
      [...vectorOps].filter((op) => !ops.includes(op)),
      "vectors of unknown ops",
    ).toEqual([]);
    const python = /^OPS[^=]*=\s*\{([\s\S]*?)\n\}/m.exec(read("runtime-gpu/arl_trainer/conformance.py"))?.[1] ?? "";
    const pythonOps = [...python.matchAll(/^\s+"([a-z_]+)":/gm)].map((m) => m[1] as string);
    expect(pythonOps.sort(), "OPS of runtime-gpu/arl_trainer/conformance.py").toEqual([...ops].sort());
  });
});

describe("recipe: add a benchmark", () => {
  it("every exported section of src/bench is run by src/bench/main.ts", () => {
    const main = read("src/bench/main.ts");
    const listed = /const all: BenchSection\[\] = \[([\s\S]*?)\];/.exec(main)?.[1] ?? "";
    const sections = readdirSync(path.join(repo, "src/bench"))
      .filter((f) => f.endsWith(".ts") && f !== "main.ts")
      .flatMap((f) =>
        [...read(`src/bench/${f}`).matchAll(/^export function (\w+Section)\(/gm)].map((m) => `${f}: ${m[1]}`),
      );
    expect(sections.length).toBeGreaterThan(5);
    expect(sections.filter((s) => !listed.includes(`${s.split(": ")[1]}(`))).toEqual([]);
  });
});
