// Every export of a module under src/ is imported by someone: a name nobody imports is either dead
// or only used inside its own file, and then it should not be part of the module's interface.
//
// Method (syntactic, with the TypeScript compiler API's parser; no type checking needed):
// 1. Exports. For every .ts file under src/, the names it exports: declarations with an `export`
//    modifier (functions, classes, interfaces, types, enums, variables, destructured ones too),
//    `export { a, b as c }` of local names, `export default`, and re-exports: `export { a as b }
//    from "./x"`, `export * as ns from "./x"` and `export * from "./x"` (whose names are those of
//    ./x, followed transitively).
// 2. Imports. Every file under src/, test/, bin/, scripts/ and editors/vscode/src/ (.ts, .mjs,
//    .js) is parsed for what it takes from a src/ module: import declarations (named, default,
//    namespace; type-only ones count), re-exports, dynamic `import("...")` (the names destructured
//    from `await import(...)` or read as `(await import(...)).name`; any other use takes every
//    export) and `import("...").Name` types. Specifiers are resolved relative to the importing
//    file; a path into dist/ (bin/arl.js, the test doubles) names the src/ module it is built from.
// 3. Uses. An imported name is marked used in the module it is imported from; a re-export passes
//    the use on to the module it re-exports from (so a re-export nobody imports is unused too, and
//    so is its source unless someone else imports it), and a namespace import uses every export.
//    An export used this way also uses the exports of the same module that its signature names
//    (parameter, return and member types, a type's whole declaration: see signatureNames), since
//    a caller may need to name them; a file's other uses of its own exports do not count.
// 4. Roots: the public API. Every export of src/index.ts counts as used (it is the package's
//    interface for tools built on arl), and so, through it, is everything it re-exports.
// The test fails with `file:line name` for each export nobody imports; there is no allow-list.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/** The package's public API: every export of these files is used by definition. */
const PUBLIC_API_ROOTS = ["src/index.ts"];

const root = fileURLToPath(new URL("../..", import.meta.url));
const SCANNED_DIRS = ["src", "test", "bin", "scripts", "editors/vscode/src"];
const SKIPPED_DIRS = new Set(["node_modules", "dist", "out", "fixtures"]);
const EVERYTHING = "*";

function filesBelow(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return SKIPPED_DIRS.has(name) ? [] : filesBelow(full);
    return /\.(ts|mts|mjs|js)$/.test(name) && !name.endsWith(".d.ts") ? [full] : [];
  });
}

/** A source file by its path relative to the repository, with `/` separators. */
interface SourceText {
  readonly name: string;
  readonly text: string;
}

/** The src/ module a relative specifier names (dist/ paths map to their sources), if any. */
function resolveSource(fromFile: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  let target = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), specifier));
  if (target.startsWith("dist/")) target = `src/${target.slice("dist/".length)}`;
  if (!target.startsWith("src/")) return undefined;
  return target.replace(/\.js$/, ".ts");
}

interface ModuleExports {
  /** Names declared and exported here, with their line. */
  readonly local: Map<string, number>;
  /** `export { a as b } from "./x"` (b -> x, a) and `export * as b from "./x"` (b -> x, *). */
  readonly forwarded: Map<string, { readonly from: string; readonly name: string; readonly line: number }>;
  /** `export * from "./x"`. */
  readonly stars: string[];
  /** For each local export, the names its signature mentions (see signatureNames). */
  readonly surface: Map<string, Set<string>>;
}

interface Import {
  readonly from: string;
  /** The imported name, or EVERYTHING for a namespace import. */
  readonly name: string;
}

const hasExport = (node: ts.Node) =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
const hasDefault = (node: ts.Node) =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);

function bindingNames(name: ts.BindingName): string[] {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((e) => (ts.isOmittedExpression(e) ? [] : bindingNames(e.name)));
}

function parse(file: SourceText): ts.SourceFile {
  const kind = /\.m?ts$/.test(file.name) ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  return ts.createSourceFile(file.name, file.text, ts.ScriptTarget.Latest, true, kind);
}

/** Every identifier below `nodes`. */
function identifiers(nodes: readonly (ts.Node | undefined)[]): Set<string> {
  const names = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) names.add(node.text);
    ts.forEachChild(node, visit);
  };
  for (const node of nodes) if (node) visit(node);
  return names;
}

const isPrivate = (node: ts.Node) =>
  (ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.PrivateKeyword)) ||
  ((ts.isPropertyDeclaration(node) || ts.isMethodDeclaration(node)) && ts.isPrivateIdentifier(node.name));

function functionSignature(node: ts.SignatureDeclarationBase): (ts.Node | undefined)[] {
  return [...(node.typeParameters ?? []), ...node.parameters.map((p) => p.type), node.type];
}

/**
 * The names an exported declaration's signature mentions: a whole interface, type alias or enum;
 * a function's type parameters, parameter and return types; a class's heritage and the types of
 * its non-private members; a variable's type annotation (or its arrow function's signature).
 * Not bodies or initial values: a helper a function calls is not part of its interface.
 */
function signatureNames(node: ts.Node): Set<string> {
  if (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || ts.isEnumDeclaration(node))
    return identifiers([node]);
  if (ts.isFunctionDeclaration(node)) return identifiers(functionSignature(node));
  if (ts.isClassDeclaration(node)) {
    const parts: (ts.Node | undefined)[] = [...(node.typeParameters ?? []), ...(node.heritageClauses ?? [])];
    for (const member of node.members) {
      if (isPrivate(member)) continue;
      if (ts.isPropertyDeclaration(member)) parts.push(member.type);
      else if (
        ts.isMethodDeclaration(member) ||
        ts.isConstructorDeclaration(member) ||
        ts.isGetAccessor(member) ||
        ts.isSetAccessor(member)
      ) {
        parts.push(...functionSignature(member));
        // Constructor parameter properties (`readonly x: T`) are members too.
      }
    }
    return identifiers(parts);
  }
  if (ts.isVariableDeclaration(node)) {
    const init = node.initializer;
    const fn = init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) ? functionSignature(init) : [];
    const asserted = init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init)) ? [init.type] : [];
    return identifiers([node.type, ...fn, ...asserted]);
  }
  return new Set();
}

function exportsOf(file: string, source: ts.SourceFile): ModuleExports {
  const local = new Map<string, number>();
  const forwarded: ModuleExports["forwarded"] = new Map();
  const stars: string[] = [];
  const surface = new Map<string, Set<string>>();
  const line = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement)) {
      const from =
        statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)
          ? resolveSource(file, statement.moduleSpecifier.text)
          : undefined;
      const clause = statement.exportClause;
      if (!statement.moduleSpecifier) {
        if (clause && ts.isNamedExports(clause)) for (const e of clause.elements) local.set(e.name.text, line(e));
      } else if (from === undefined)
        continue; // a package's names: not ours to check
      else if (!clause) stars.push(from);
      else if (ts.isNamespaceExport(clause))
        forwarded.set(clause.name.text, { from, name: EVERYTHING, line: line(clause) });
      else
        for (const e of clause.elements)
          forwarded.set(e.name.text, { from, name: (e.propertyName ?? e.name).text, line: line(e) });
    } else if (ts.isExportAssignment(statement)) local.set("default", line(statement));
    else if (hasExport(statement)) {
      if (hasDefault(statement)) local.set("default", line(statement));
      else if (ts.isVariableStatement(statement)) {
        for (const d of statement.declarationList.declarations) {
          for (const n of bindingNames(d.name)) {
            local.set(n, line(d));
            surface.set(n, signatureNames(d));
          }
        }
      } else {
        const name = (statement as ts.DeclarationStatement).name;
        if (name && ts.isIdentifier(name)) {
          local.set(name.text, line(statement));
          surface.set(name.text, signatureNames(statement));
        }
      }
    }
  }
  return { local, forwarded, stars, surface };
}

/** The names taken from a dynamic `import(...)`: destructured from its await, read off it, or all. */
function dynamicImportNames(call: ts.CallExpression): string[] {
  let node: ts.Node = call;
  if (ts.isAwaitExpression(node.parent)) node = node.parent;
  while (ts.isParenthesizedExpression(node.parent)) node = node.parent;
  const parent = node.parent;
  if (node !== call && ts.isVariableDeclaration(parent) && ts.isObjectBindingPattern(parent.name)) {
    const names = parent.name.elements.map((e) =>
      e.propertyName && ts.isIdentifier(e.propertyName)
        ? e.propertyName.text
        : ts.isIdentifier(e.name)
          ? e.name.text
          : undefined,
    );
    if (names.every((n): n is string => n !== undefined)) return names;
  }
  if (node !== call && ts.isPropertyAccessExpression(parent) && parent.expression === node) return [parent.name.text];
  return [EVERYTHING];
}

function importsOf(file: string, source: ts.SourceFile): Import[] {
  const found: Import[] = [];
  const take = (specifier: ts.Node | undefined, names: readonly string[]) => {
    if (!specifier || !ts.isStringLiteralLike(specifier)) return;
    const from = resolveSource(file, specifier.text);
    if (from !== undefined) for (const name of names) found.push({ from, name });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const names: string[] = [];
      if (clause?.name) names.push("default");
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) names.push(EVERYTHING);
      else if (bindings) for (const e of bindings.elements) names.push((e.propertyName ?? e.name).text);
      take(node.moduleSpecifier, names);
    } else if (ts.isExportDeclaration(node) && !file.startsWith("src/")) {
      // A re-export outside src/ (src/ re-exports are followed as exports instead).
      const clause = node.exportClause;
      take(
        node.moduleSpecifier,
        !clause || ts.isNamespaceExport(clause)
          ? [EVERYTHING]
          : clause.elements.map((e) => (e.propertyName ?? e.name).text),
      );
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      take(node.arguments[0], dynamicImportNames(node));
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      let qualifier = node.qualifier;
      while (qualifier && ts.isQualifiedName(qualifier)) qualifier = qualifier.left;
      take(node.argument.literal, [qualifier ? qualifier.text : EVERYTHING]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

interface Finding {
  readonly file: string;
  readonly name: string;
  readonly line: number;
}

/** The exports of `sources`' src/ modules that no source imports (the roots' exports excepted). */
function unusedExports(sources: readonly SourceText[], roots: readonly string[]): Finding[] {
  const modules = new Map<string, ModuleExports>();
  const imports: Import[] = [];
  for (const file of sources) {
    const source = parse(file);
    if (file.name.startsWith("src/") && file.name.endsWith(".ts")) modules.set(file.name, exportsOf(file.name, source));
    imports.push(...importsOf(file.name, source));
  }

  const used = new Set<string>();
  const allNames = (file: string, seen = new Set<string>()): string[] => {
    const m = modules.get(file);
    if (!m || seen.has(file)) return [];
    seen.add(file);
    // `export *` passes on every name but the default.
    return [
      ...m.local.keys(),
      ...m.forwarded.keys(),
      ...m.stars.flatMap((s) => allNames(s, seen).filter((n) => n !== "default")),
    ];
  };
  const mark = (file: string, name: string): void => {
    const m = modules.get(file);
    if (!m) return;
    if (name === EVERYTHING) {
      for (const n of new Set(allNames(file))) mark(file, n);
      return;
    }
    const key = `${file}#${name}`;
    if (used.has(key)) return;
    used.add(key);
    // The types an export's signature names are part of its interface: used with it.
    for (const n of m.surface.get(name) ?? []) if (n !== name && m.local.has(n)) mark(file, n);
    const via = m.forwarded.get(name);
    if (via) mark(via.from, via.name);
    else if (!m.local.has(name) && name !== "default")
      for (const star of m.stars) if (allNames(star).includes(name)) mark(star, name);
  };
  for (const api of roots) mark(api, EVERYTHING);
  for (const i of imports) mark(i.from, i.name);

  const findings: Finding[] = [];
  for (const [file, m] of modules) {
    if (roots.includes(file)) continue;
    for (const [name, line] of m.local) if (!used.has(`${file}#${name}`)) findings.push({ file, name, line });
    for (const [name, { line }] of m.forwarded) if (!used.has(`${file}#${name}`)) findings.push({ file, name, line });
  }
  return findings.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
}

function repositorySources(): SourceText[] {
  return SCANNED_DIRS.flatMap((d) => filesBelow(path.join(root, d))).map((file) => ({
    name: path.relative(root, file).split(path.sep).join("/"),
    text: readFileSync(file, "utf8"),
  }));
}

describe("exports", () => {
  const findings = unusedExports(repositorySources(), PUBLIC_API_ROOTS);

  it("every export of a src/ module is imported somewhere (or is the public API)", () => {
    const unexpected = findings.map((f) => `${f.file}:${f.line} ${f.name}`);
    expect(unexpected, "exports nobody imports: remove the `export` (or the dead code)").toEqual([]);
  });

  it("the method: follows named, star and namespace re-exports, dynamic imports, dist/ paths, signatures and the roots", () => {
    const project: SourceText[] = [
      {
        name: "src/index.ts",
        text: 'export { api } from "./a/api.js";\nexport type * as shapes from "./a/shapes.js";\n',
      },
      { name: "src/a/api.ts", text: "export function api() {}\nexport const helper = 1;\n" },
      { name: "src/a/shapes.ts", text: "export interface Square {}\nexport type Circle = {};\n" },
      {
        name: "src/a/used.ts",
        text: "export const { one, two } = { one: 1, two: 2 };\nexport class Unused {}\nexport default 3;\n",
      },
      { name: "src/a/barrel.ts", text: 'export * from "./used.js";\nexport { lone as renamed } from "./lone.js";\n' },
      { name: "src/a/lone.ts", text: "export const lone = 1;\nexport const self = 2;\nconsole.log(self);\n" },
      { name: "src/a/late.ts", text: "export const late = 1;\nexport const other = 2;\nexport type Shape = {};\n" },
      {
        name: "src/b/user.ts",
        text: 'import def, { one } from "../a/barrel.js";\nimport { default as d } from "../a/used.js";\nconst { late } = await import("../a/late.js");\nlet s: import("../a/late.js").Shape;\n',
      },
      { name: "test/x.test.ts", text: 'import { two } from "../src/a/used.js";\n' },
      { name: "bin/cli.js", text: 'const m = await import("../dist/b/entry.js");\n' },
      { name: "src/b/entry.ts", text: "export const a = 1;\nexport const b = 2;\n" },
      // f's parameter type is used with f; a type only its body names is not.
      {
        name: "src/a/sig.ts",
        text: "export interface Opts {}\nexport interface Inner {}\nexport function f(o: Opts): void {\n  const i: Inner = o;\n}\n",
      },
      { name: "src/b/caller.ts", text: 'import { f } from "../a/sig.js";\n' },
    ];
    const found = unusedExports(project, ["src/index.ts"]).map((f) => `${f.file} ${f.name}`);
    // `def` comes through barrel's `export *`, which passes on no default: used.ts's default is
    // used by the second import only.
    expect(found).toEqual([
      "src/a/api.ts helper",
      "src/a/barrel.ts renamed",
      "src/a/late.ts other",
      "src/a/lone.ts lone",
      "src/a/lone.ts self",
      "src/a/sig.ts Inner",
      "src/a/used.ts Unused",
    ]);
  });
});
