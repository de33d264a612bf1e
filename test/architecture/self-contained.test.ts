// The repository stands alone: nothing under src/, test/, scripts/, bin/ or runtime-gpu/ names a
// path outside it. A user's clone has no folder beside it (our own machines lay a `shared/` there,
// which `.ci/run` may read for checks of its own, never the product or the README's test command).
// Caught: relative paths that climb above the repository root (`new URL("../..", import.meta.url)`,
// `path.join(root, "..", ...)`, Python's `parents[N]` and nested `dirname`), a `shared/` folder
// beside the clone, and absolute paths of a developer's machine.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const scanned = ["src", "test", "scripts", "bin", "runtime-gpu"];
const sourceFile = /\.(ts|mts|js|mjs|cjs|py|sh)$/;
const skipDirs = new Set(["node_modules", "dist", "__pycache__", ".venv", ".pytest_cache", ".ruff_cache"]);
// This file spells out the patterns it looks for.
const self = path.relative(root, fileURLToPath(import.meta.url));

interface Finding {
  readonly file: string;
  readonly line: number;
  readonly text: string;
  readonly why: string;
}

function filesBelow(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return skipDirs.has(e.name) ? [] : filesBelow(full);
    return e.isFile() && sourceFile.test(e.name) ? [full] : [];
  });
}

/** The directory a file's relative paths start from, as a depth below the repository root. */
const depthOf = (file: string) => path.relative(root, path.dirname(file)).split(path.sep).length;

/** Whether a relative path, resolved from `file`'s directory, leaves the repository. */
function climbsOut(file: string, relative: string): boolean {
  const resolved = path.resolve(path.dirname(file), relative);
  return resolved !== root.replace(/\/$/, "") && !resolved.startsWith(root);
}

type Rule = (file: string, line: string) => string | undefined;

const rules: readonly Rule[] = [
  // new URL("../../..", import.meta.url): dist/ mirrors src/ at the same depth, so the source's own
  // folder is the right base for compiled files too.
  (file, line) => {
    for (const m of line.matchAll(/new URL\(\s*["'`]([^"'`]*)["'`]\s*,\s*import\.meta\.url/g)) {
      if (climbsOut(file, m[1]!)) return `new URL("${m[1]}") resolves outside the repository`;
    }
    return undefined;
  },
  // Import specifiers that climb out.
  (file, line) => {
    for (const m of line.matchAll(/(?:from|import\()\s*["'](\.{1,2}\/[^"']*)["']/g)) {
      if (climbsOut(file, m[1]!)) return `import "${m[1]}" resolves outside the repository`;
    }
    return undefined;
  },
  // A folder beside the clone: "../shared", path.join(x, "..", "shared"), the shared examples.
  (_file, line) =>
    /\.\.\/shared\b|["']\.\.["']\s*,\s*["']shared["']|\bshared\/(examples|seeds|hooks)\b/.test(line)
      ? "names the shared/ folder beside the clone"
      : undefined,
  // Absolute paths of a developer's machine.
  (_file, line) =>
    /["'`](\/work|\/root|\/home\/[^"'`/]+|\/Users\/[^"'`/]+)(\/|["'`])/.test(line)
      ? "names an absolute path of one machine"
      : undefined,
  // Python: Path(__file__).parents[N] and os.path.dirname(...) nested N deep.
  (file, line) => {
    if (!file.endsWith(".py")) return undefined;
    const parents = /Path\(__file__\)(?:\.resolve\(\))?\.parents\[(\d+)\]/.exec(line);
    // parents[0] is the file's own folder, parents[depth] the root: a higher index is above it.
    if (parents && Number(parents[1]) > depthOf(file)) return `parents[${parents[1]}] is above the repository root`;
    const dirnames = line.match(/os\.path\.dirname\(/g)?.length ?? 0;
    // One dirname of __file__ is its folder; each further one climbs a level.
    if (/__file__/.test(line) && dirnames - 1 > depthOf(file))
      return `${dirnames} nested dirname() climb above the repository root`;
    return undefined;
  },
];

function findings(files: readonly string[]): Finding[] {
  return files.flatMap((file) =>
    readFileSync(file, "utf8")
      .split("\n")
      .flatMap((text, i) =>
        rules.flatMap((rule) => {
          const why = rule(file, text);
          return why ? [{ file: path.relative(root, file), line: i + 1, text: text.trim().slice(0, 160), why }] : [];
        }),
      ),
  );
}

describe("the repository stands alone", () => {
  it("no file under src/, test/, scripts/, bin/ or runtime-gpu/ names a path outside the repository", () => {
    const files = scanned
      .flatMap((dir) => filesBelow(path.join(root, dir)))
      .filter((f) => path.relative(root, f) !== self);
    expect(files.length).toBeGreaterThan(100);
    expect(findings(files)).toEqual([]);
  });

  it("the rules catch each way of reaching outside", () => {
    const at = (rel: string) => path.join(root, rel);
    // Spelled in pieces, so that a plain grep for the folder's name does not find this file.
    const sharedExamples = ["shared", "examples"].join("/");
    const line = (file: string, text: string) => rules.map((r) => r(at(file), text)).find((w) => w !== undefined);
    expect(line("test/plan/support.ts", `new URL("../../../${sharedExamples}/", import.meta.url)`)).toBeDefined();
    expect(line("test/plan/support.ts", `new URL("../../", import.meta.url)`)).toBeUndefined();
    expect(line("src/bench/plan.ts", `new URL("../../experiments/", import.meta.url)`)).toBeUndefined();
    expect(line("src/bench/plan.ts", `new URL("../../../elsewhere/", import.meta.url)`)).toBeDefined();
    expect(line("test/lsp/fixtures.ts", `path.join(REPO, "..", "shared", "examples", name)`)).toBeDefined();
    expect(line("test/envs/sql.test.ts", `readFileSync("/work/${sharedExamples}/x.arl")`)).toBeDefined();
    expect(line("test/envs/sql.test.ts", `readFileSync("/home/alice/x.arl")`)).toBeDefined();
    expect(line("test/x.test.ts", `import { a } from "../../../outside/a.js";`)).toBeDefined();
    expect(line("test/x/y.test.ts", `import { a } from "../../src/a.js";`)).toBeUndefined();
    expect(line("runtime-gpu/tests/x.py", `REPO = Path(__file__).resolve().parents[2]`)).toBeUndefined();
    expect(line("runtime-gpu/tests/x.py", `OUT = Path(__file__).resolve().parents[3]`)).toBeDefined();
    expect(
      line("runtime-gpu/tests/x.py", `ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))`),
    ).toBeUndefined();
    expect(
      line("runtime-gpu/x.py", `UP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))`),
    ).toBeUndefined();
    expect(
      line("runtime-gpu/x.py", `UP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))`),
    ).toBeDefined();
  });
});
