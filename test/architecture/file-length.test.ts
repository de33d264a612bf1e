// No source file is longer than 500 lines (issue 43; CONTRIBUTING.md: "files of at most about
// 400 lines"): a file past that holds more than one concern and is split along them. Every
// .ts, .js, .mjs and .py file under src/, test/ (without its fixtures), bin/, scripts/ and
// runtime-gpu/ counts, except what is installed or built there (virtual environments,
// node_modules, dist/, caches, anything in a folder whose name begins with a dot).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const MAX_LINES = 500;
const root = fileURLToPath(new URL("../..", import.meta.url));
const SCANNED_DIRS = ["src", "test", "bin", "scripts", "runtime-gpu"];
/** Folders of installed or built files, and the golden fixtures that are data, not code. */
const SKIPPED_DIRS = new Set(["node_modules", "dist", "build", "__pycache__", "venv", "test/fixtures"]);
const EXTENSIONS = new Set([".ts", ".js", ".mjs", ".py"]);

function sourcesBelow(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    const relative = path.relative(root, full).split(path.sep).join("/");
    if (entry.isDirectory()) {
      const skipped =
        entry.name.startsWith(".") ||
        entry.name.endsWith(".egg-info") ||
        SKIPPED_DIRS.has(entry.name) ||
        SKIPPED_DIRS.has(relative);
      return skipped ? [] : sourcesBelow(full);
    }
    return entry.isFile() && EXTENSIONS.has(path.extname(entry.name)) ? [relative] : [];
  });
}

/** Lines as `wc -l` counts them (a last line without its newline counts too). */
function lineCount(file: string): number {
  const text = readFileSync(path.join(root, file), "utf8");
  const newlines = text.split("\n").length - 1;
  return text.length > 0 && !text.endsWith("\n") ? newlines + 1 : newlines;
}

describe("file length", () => {
  const files = SCANNED_DIRS.flatMap((dir) => sourcesBelow(path.join(root, dir)));

  it("finds the sources it is meant to check", () => {
    for (const file of ["src/compiler.ts", "test/architecture/file-length.test.ts", "bin/arl.js"])
      expect(files).toContain(file);
    expect(files.some((f) => f.startsWith("runtime-gpu/") && f.endsWith(".py"))).toBe(true);
    expect(files.some((f) => f.startsWith("test/fixtures/"))).toBe(false);
  });

  it(`no source file has more than ${MAX_LINES} lines: split a longer one into modules by concern`, () => {
    const long = files
      .map((file) => ({ file, lines: lineCount(file) }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(long).toEqual([]);
  });
});
