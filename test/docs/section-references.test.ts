// Every reference to this project's documents resolves: a `NAME.md` a file mentions exists (next
// to the file or from the repository root), and a section reference `docs/NAME.md §N` points at
// a heading `§N` of that document. A bare `§N` refers to the document named last before it on
// its line, or earlier in the file (in a docs/ page: the page itself). Citations of other
// people's documents are not ours to check and are recognised by what stands next to them: an
// RFC (`RFC 8785 §3.2.3`), a paper (`Yu et al. 2025, §3.2`, `GLM-5 (2026, §4.1.2)`,
// `Practitioner's Guide §3`). Documents that are not in the repository fail by name.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const self = "test/docs/section-references.test.ts";

/** The files whose references are checked: sources, tests, docs and the stdlib. */
const files = execFileSync(
  "git",
  [
    "ls-files",
    "--cached",
    "--others",
    "--exclude-standard",
    "src",
    "runtime-gpu",
    "test",
    "docs",
    "stdlib",
    "README.md",
    "CONTRIBUTING.md",
  ],
  { cwd: repo, encoding: "utf8" },
)
  .split("\n")
  .filter((f) => /\.(ts|mjs|js|py|md|arl|toml)$/.test(f) && f !== self && existsSync(path.join(repo, f)));

/** Names of design documents that lived outside the repository; the code must cite docs/ instead. */
const absentDocuments = /\b(RL-SEMANTICS|ARCHITECTURE\.md|LANGUAGE\.md|PROTOCOL\.md)\b/;

/** Files the code names that are outputs, not documents (`arl report` writes report.md, `arl export verl` SEMANTICS.md). */
const generatedNames = new Set(["report.md", "SEMANTICS.md"]);

const mdToken = /(https?:\/\/\S*?)?((?:\.{0,2}\/)?(?:[\w.-]+\/)*[\w-]+\.md)(#[\w-]+)?\b/g;
const external = /RFC\s*\d+|RFC's|\bet al\.|\b(?:19|20)\d\d\b|\bGuide\b/g;
const section = /§(\d+(?:\.\d+)*)/g;

interface Marker {
  readonly at: number;
  readonly end: number;
  /** The document a marker names (repository-relative), or null for an external citation. */
  readonly document: string | null;
}

/** The repository-relative path a mention of `token` in `file` names, if it exists. */
function resolve(file: string, token: string): string | undefined {
  for (const base of [path.dirname(file), "."]) {
    const candidate = path.normalize(path.join(base, token));
    if (!candidate.startsWith("..") && existsSync(path.join(repo, candidate))) return candidate;
  }
  return undefined;
}

function markers(file: string, line: string): Marker[] {
  const out: Marker[] = [];
  for (const m of line.matchAll(mdToken)) {
    if (m[1] || generatedNames.has(path.basename(m[2] as string))) continue;
    out.push({ at: m.index, end: m.index + m[0].length, document: resolve(file, m[2] as string) ?? `missing:${m[2]}` });
  }
  for (const m of line.matchAll(/\bRL-SEMANTICS\b/g))
    out.push({ at: m.index, end: m.index + m[0].length, document: "missing:RL-SEMANTICS" });
  for (const m of line.matchAll(external)) out.push({ at: m.index, end: m.index + m[0].length, document: null });
  return out.sort((a, b) => a.at - b.at);
}

function headingsOf(document: string): string {
  return readFileSync(path.join(repo, document), "utf8");
}

describe("references to the project's documents", () => {
  it("name no document that is not in the repository", () => {
    const found: string[] = [];
    for (const file of files) {
      readFileSync(path.join(repo, file), "utf8")
        .split("\n")
        .forEach((line, i) => {
          const m = absentDocuments.exec(line);
          if (m)
            found.push(
              `${file}:${i + 1}: ${m[1]} (the design documents are docs/semantics.md, docs/architecture.md, docs/language.md, docs/protocol.md)`,
            );
        });
    }
    expect(found).toEqual([]);
  });

  it("name .md files that exist", () => {
    const missing: string[] = [];
    for (const file of files) {
      readFileSync(path.join(repo, file), "utf8")
        .split("\n")
        .forEach((line, i) => {
          for (const m of markers(file, line))
            if (m.document?.startsWith("missing:"))
              missing.push(`${file}:${i + 1}: ${m.document.slice("missing:".length)}`);
        });
    }
    expect(missing).toEqual([]);
  });

  it("point every § at a heading of the document they cite", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      const lines = readFileSync(path.join(repo, file), "utf8").split("\n");
      // In a docs/ page a bare § is the page's own; elsewhere the last document named before it.
      let context: Marker | undefined = file.startsWith("docs/") ? { at: 0, end: 0, document: file } : undefined;
      lines.forEach((line, i) => {
        const onLine = markers(file, line);
        for (const s of line.matchAll(section)) {
          const before = onLine.filter((m) => m.end <= s.index);
          const cited = before[before.length - 1] ?? context;
          const where = `${file}:${i + 1}: ${s[0]}`;
          if (!cited) {
            broken.push(`${where} names no document (write docs/NAME.md ${s[0]})`);
            continue;
          }
          if (cited.document === null) continue; // someone else's document
          if (cited.document.startsWith("missing:")) {
            broken.push(`${where} cites ${cited.document.slice("missing:".length)}, which is not in the repository`);
            continue;
          }
          checked++;
          const heading = new RegExp(`^#{1,6} ${s[0].replace(/\./g, "\\.")}(?![\\d.])`, "m");
          if (!heading.test(headingsOf(cited.document)))
            broken.push(`${where}: ${cited.document} has no heading ${s[0]}`);
        }
        const last = onLine[onLine.length - 1];
        if (last && !file.startsWith("docs/")) context = last;
      });
    }
    expect(broken).toEqual([]);
    expect(checked, "section references checked").toBeGreaterThan(50);
  });
});
