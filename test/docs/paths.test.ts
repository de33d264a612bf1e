// The documents name the repository's files by path (`src/runtime/run/streams.ts`); a move that
// forgets the docs leaves readers at a file that is not there. Every backquoted path under a
// top-level folder of the repository must exist. Placeholders in capitals (`src/lint/rules/CODE.ts`,
// `experiments/NAME.arl`) stand for a file the reader makes and are skipped.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../..", import.meta.url));

const documents = [
  "README.md",
  "CONTRIBUTING.md",
  "docs/architecture.md",
  "docs/semantics.md",
  "docs/language.md",
  "docs/protocol.md",
  "docs/distributed.md",
  "docs/guide.md",
  "docs/commands.md",
  "docs/benchmarks.md",
  "runtime-gpu/README.md",
  "src/trainer/embedded/README.md",
  "experiments/README.md",
];

/** A backquoted path that starts with one of the repository's own folders. */
const quotedPath = /`((?:src|runtime-gpu|docs|test|experiments|stdlib|editors|scripts|grammar|bin)\/[\w./-]*)`/g;
const placeholder = /(?:^|\/)[A-Z][A-Z_]*(?:\.|\/|$)/;

function missingPaths(document: string): string[] {
  const text = readFileSync(path.join(repo, document), "utf8");
  const missing: string[] = [];
  for (const match of text.matchAll(quotedPath)) {
    const named = (match[1] ?? "").replace(/[.,:;]+$/, "");
    if (placeholder.test(named) || named.includes("*")) continue;
    if (!existsSync(path.join(repo, named))) missing.push(`${document}: ${named}`);
  }
  return missing;
}

describe("paths in the documents", () => {
  it("every backquoted repository path names a file or folder that exists", () => {
    const present = documents.filter((d) => existsSync(path.join(repo, d)));
    expect(present.length, "documents checked").toBeGreaterThan(6);
    expect(present.flatMap(missingPaths)).toEqual([]);
  });

  it("the check sees a path that is gone, and skips placeholders", () => {
    const probe = "`src/runtime/seeds.ts` and `src/lint/rules/CODE.ts` and `docs/architecture.md`";
    const found = [...probe.matchAll(quotedPath)]
      .map((m) => m[1] ?? "")
      .filter((p) => !placeholder.test(p) && !existsSync(path.join(repo, p)));
    expect(found).toEqual(["src/runtime/seeds.ts"]);
  });
});
