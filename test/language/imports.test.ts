import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { STDLIB_ROOT } from "../../src/contracts/paths.js";
import { ModuleLoader, type SourceHost } from "../../src/language/imports.js";

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-imports-"));
  for (const [name, text] of Object.entries(files)) {
    const full = path.join(dir, name);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
  return dir;
}

const codes = (ds: readonly { code: string }[]) => ds.map((d) => d.code);

describe("import resolution", () => {
  it("resolves relative imports with or without the extension, and names them by alias or last segment", () => {
    const dir = project({
      "main.arl": 'import "./lib/common"\nimport "./lib/other.arl" as o\nexperiment e {}\n',
      "lib/common.arl": "env a {}\n",
      "lib/other.arl": 'import "./common"\nenv b {}\n',
    });
    const program = new ModuleLoader().load(path.join(dir, "main.arl"));
    expect(program.diagnostics).toEqual([]);
    expect([...program.modules.keys()].map((k) => path.relative(dir, k))).toEqual([
      "main.arl",
      "lib/common.arl",
      "lib/other.arl",
    ]);
    const main = program.modules.get(path.join(dir, "main.arl"))!;
    expect(main.imports.map((i) => i.name)).toEqual(["common", "o"]);
  });

  it("resolves std/ into the shipped stdlib folder", () => {
    const dir = project({ "main.arl": 'import "std/algorithms" as algo\nexperiment e {}\n' });
    const program = new ModuleLoader().load(path.join(dir, "main.arl"));
    const imp = program.modules.get(path.join(dir, "main.arl"))!.imports[0]!;
    expect(imp.target).toBe(path.join(STDLIB_ROOT, "std", "algorithms.arl"));
  });

  it("reports a missing file at the import's path string", () => {
    const dir = project({ "main.arl": "experiment x {}\n".replace("experiment", 'import "./nope"\nexperiment') });
    const program = new ModuleLoader().load(path.join(dir, "main.arl"));
    expect(codes(program.diagnostics)).toEqual(["import-not-found"]);
    expect(program.diagnostics[0]!.range.start).toMatchObject({ line: 1, column: 8 });
  });

  it("reports paths that are neither std/ nor relative", () => {
    const dir = project({ "main.arl": 'import "/etc/passwd"\nimport "lib"\n' });
    const program = new ModuleLoader().load(path.join(dir, "main.arl"));
    expect(codes(program.diagnostics)).toEqual(["invalid-import-path", "invalid-import-path"]);
  });

  it("refuses imports that leave the entry file's directory tree", () => {
    const dir = project({ "outside.arl": "env x {}\n", "exp/main.arl": 'import "../outside"\n' });
    const program = new ModuleLoader().load(path.join(dir, "exp", "main.arl"));
    expect(codes(program.diagnostics)).toEqual(["import-outside-root"]);
    expect(program.modules.has(path.join(dir, "outside.arl"))).toBe(false);
  });

  it("collects 150,000 parse diagnostics of one file without overflowing the stack", () => {
    const dir = project({ "main.arl": "@ ".repeat(150_000) });
    const program = new ModuleLoader().load(path.join(dir, "main.arl"));
    expect(program.diagnostics.length).toBe(150_000);
  });

  it("diagnoses a cycle once, naming its files", () => {
    const dir = project({
      "a.arl": 'import "./b"\n',
      "b.arl": 'import "./c"\n',
      "c.arl": 'import "./a"\n',
    });
    const program = new ModuleLoader().load(path.join(dir, "a.arl"));
    expect(codes(program.diagnostics)).toEqual(["import-cycle"]);
    expect(program.diagnostics[0]!.message).toBe("import cycle: a.arl -> b.arl -> c.arl -> a.arl");
    expect(program.diagnostics[0]!.file).toBe(path.join(dir, "c.arl"));
  });

  it("diagnoses a file importing itself", () => {
    const dir = project({ "a.arl": 'import "./a"\n' });
    expect(codes(new ModuleLoader().load(path.join(dir, "a.arl")).diagnostics)).toEqual(["import-cycle"]);
  });

  it("reports two imports under one name", () => {
    const dir = project({
      "main.arl": 'import "./x/common"\nimport "./y/common"\n',
      "x/common.arl": "",
      "y/common.arl": "",
    });
    const program = new ModuleLoader().load(path.join(dir, "main.arl"));
    expect(codes(program.diagnostics)).toEqual(["duplicate-import"]);
    expect(program.diagnostics[0]!.related?.[0]?.range.start.line).toBe(1);
  });

  it("reports syntax errors of imported files under their own path", () => {
    const dir = project({ "main.arl": 'import "./bad"\n', "bad.arl": "env x { a: }\n" });
    const program = new ModuleLoader().load(path.join(dir, "main.arl"));
    expect(program.diagnostics.map((d) => [path.basename(d.file), d.code])).toEqual([["bad.arl", "syntax-error"]]);
  });

  it("reads and parses each file once per loader, however many entries import it", () => {
    const dir = project({ "a.arl": 'import "./shared"\n', "b.arl": 'import "./shared"\n', "shared.arl": "env s {}\n" });
    const reads: string[] = [];
    const host: SourceHost = {
      readFile(p) {
        reads.push(path.basename(p));
        return readFileSync(p, "utf8");
      },
    };
    const loader = new ModuleLoader(host);
    const fromA = loader.load(path.join(dir, "a.arl")).modules.get(path.join(dir, "shared.arl"));
    const fromB = loader.load(path.join(dir, "b.arl")).modules.get(path.join(dir, "shared.arl"));
    expect(fromB).toBe(fromA);
    expect(reads.sort()).toEqual(["a.arl", "b.arl", "shared.arl"]);
  });
});
