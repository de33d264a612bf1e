// Every import under src/ runs with the layer order: a file imports from its own directory or from a
// lower rank, never from a peer or a higher rank, and no set of files imports itself round in a
// cycle. Type-only and dynamic imports count like any other: a type that points up is still a
// dependency that points up.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The layer order, bottom to top. Written once here; docs/architecture.md carries the same table.
const LAYERS: readonly (readonly string[])[] = [
  ["contracts"],
  ["diagnostics", "rl"],
  ["language"],
  ["semantics"],
  ["lint"],
  ["plan"],
  ["compiler", "envs", "trainer"],
  ["episode"],
  ["inference"],
  ["runtime"],
  ["conformance", "export", "report"],
  ["lsp", "cluster"],
  ["cli", "bench", "grammar"],
];

// The public API sits above every layer and may import any of them.
const TOP_FILE = "index.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const src = path.join(root, "src");
const architectureDoc = path.join(root, "docs/architecture.md");

const rankOf = new Map<string, number>(LAYERS.flatMap((dirs, rank) => dirs.map((dir) => [dir, rank] as const)));

interface Edge {
  readonly from: string; // importing file, relative to src/
  readonly to: string; // imported file, relative to src/
  readonly line: number; // 1-based line of the specifier in `from`
  readonly specifier: string;
  readonly dynamic: boolean; // an `import(...)` call or type rather than a declaration
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith(".ts") ? [full] : [];
  });
}

// Every module specifier a file names: import/export declarations, `import x = require(...)`,
// dynamic `import(...)` calls and `import("...")` types.
function specifiers(file: ts.SourceFile): { text: string; pos: number; dynamic: boolean }[] {
  const found: { text: string; pos: number; dynamic: boolean }[] = [];
  const record = (node: ts.Node | undefined, dynamic: boolean): void => {
    if (node !== undefined && ts.isStringLiteralLike(node)) {
      found.push({ text: node.text, pos: node.getStart(file), dynamic });
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) record(node.moduleSpecifier, false);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      record(node.moduleReference.expression, false);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      record(node.arguments[0], true);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) record(node.argument.literal, true);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

// Relative specifiers name `.js` files that the compiler emits from `.ts` sources.
function resolve(fromFile: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined; // node: built-ins and npm packages
  const target = path.resolve(path.dirname(fromFile), specifier);
  return target.endsWith(".js") ? `${target.slice(0, -3)}.ts` : target;
}

function collectEdges(): { files: string[]; edges: Edge[]; unresolved: string[] } {
  const files = sourceFiles(src);
  const edges: Edge[] = [];
  const unresolved: string[] = [];
  for (const full of files) {
    const text = readFileSync(full, "utf8");
    const file = ts.createSourceFile(full, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const from = path.relative(src, full);
    for (const { text: specifier, pos, dynamic } of specifiers(file)) {
      const target = resolve(full, specifier);
      if (target === undefined) continue;
      const line = file.getLineAndCharacterOfPosition(pos).line + 1;
      const to = path.relative(src, target);
      if (to.startsWith("..")) continue; // package.json and other files outside src/ carry no layer
      if (!existsSync(target)) unresolved.push(`src/${from}:${line} imports ${specifier}, which does not exist`);
      else edges.push({ from, to, line, specifier, dynamic });
    }
  }
  return { files: files.map((full) => path.relative(src, full)), edges, unresolved };
}

// The directory directly under src/ that a file belongs to; a file directly in src/ is its own
// directory (src/compiler.ts is "compiler"), except the public API.
function directoryOf(file: string): string {
  const [first, ...rest] = file.split(path.sep);
  if (first === undefined) throw new Error(`empty path`);
  return rest.length === 0 ? first.replace(/\.ts$/, "") : first;
}

// Tarjan's strongly connected components; every component with more than one file, or a file that
// imports itself, is a cycle.
function cycles(files: readonly string[], edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>(files.map((file) => [file, []]));
  for (const edge of edges) next.get(edge.from)?.push(edge.to);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const connect = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter);
    counter += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of next.get(file) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    for (;;) {
      const member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
      if (member === file) break;
    }
    const selfLoop = (next.get(file) ?? []).includes(file);
    if (component.length > 1 || selfLoop) found.push(component.sort());
  };
  for (const file of files) if (!index.has(file)) connect(file);
  return found;
}

// The `| Rank | Directories |` table under `## Layers`, one row per numbered rank.
function documentedLayers(markdown: string): string[][] {
  const section = /^## Layers\s*$([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(markdown)?.[1];
  if (section === undefined) throw new Error("docs/architecture.md has no `## Layers` section");
  const rows = section.split("\n").filter((line) => line.trim().startsWith("|"));
  const header = rows[0]
    ?.split("|")
    .map((cell) => cell.trim())
    .filter((cell) => cell !== "");
  if (header?.[0] !== "Rank" || header[1] !== "Directories") {
    throw new Error("the `## Layers` section's table does not start with `| Rank | Directories |`");
  }
  const layers: string[][] = [];
  for (const row of rows.slice(2)) {
    const [rank, dirs] = row
      .split("|")
      .slice(1, 3)
      .map((cell) => cell.trim());
    if (rank === undefined || dirs === undefined || !/^\d+$/.test(rank)) continue;
    layers[Number(rank)] = dirs.split(",").map((dir) => dir.trim().replace(/^`|`$/g, "").replace(/\/$/, ""));
  }
  return Array.from(layers, (dirs) => dirs ?? []);
}

describe("import direction", () => {
  const { files, edges, unresolved } = collectEdges();

  it("finds the imports it checks", () => {
    expect(unresolved).toEqual([]);
    // A parser that silently saw nothing would pass every check below.
    expect(edges.length).toBeGreaterThan(files.length);
    expect(edges.some((edge) => edge.dynamic)).toBe(true);
  });

  it("places every directory under src/ in exactly one layer", () => {
    const placed = LAYERS.flat();
    expect(new Set(placed).size).toBe(placed.length);
    const directories = [...new Set(files.filter((file) => file !== TOP_FILE).map(directoryOf))].sort();
    expect(directories.filter((dir) => !rankOf.has(dir))).toEqual([]);
  });

  it("imports only from the file's own directory or a lower rank", () => {
    const violations = edges.flatMap((edge) => {
      if (edge.from === TOP_FILE) return [];
      const fromDir = directoryOf(edge.from);
      const toDir = directoryOf(edge.to);
      if (fromDir === toDir) return [];
      const fromRank = rankOf.get(fromDir);
      const toRank = edge.to === TOP_FILE ? Infinity : rankOf.get(toDir);
      if (fromRank === undefined || toRank === undefined || toRank < fromRank) return [];
      return [
        `src/${edge.from}:${edge.line} imports ${edge.specifier} (${fromDir} rank ${fromRank} -> ${toDir} rank ${toRank})`,
      ];
    });
    expect(violations).toEqual([]);
  });

  it("has no import cycle between files", () => {
    const report = cycles(files, edges).map((component) => {
      const members = new Set(component);
      const links = edges
        .filter((edge) => members.has(edge.from) && members.has(edge.to))
        .map((edge) => `src/${edge.from}:${edge.line} -> ${edge.specifier}`);
      return links.join("; ");
    });
    expect(report).toEqual([]);
  });
});

describe("docs/architecture.md", () => {
  // The docs are written alongside this test and committed: a missing file fails here.
  it("lists the same layers as this test", () => {
    const documented = documentedLayers(readFileSync(architectureDoc, "utf8"));
    expect(documented.map((dirs) => [...dirs].sort())).toEqual(LAYERS.map((dirs) => [...dirs].sort()));
  });
});
