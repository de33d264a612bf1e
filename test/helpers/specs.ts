// The .arl specs the repository holds: the shipped experiments/ and stdlib/, and the example specs
// of the test suites (test/fixtures/examples).
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { arlFilesBelow } from "../../src/language/arl-files.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

export interface Spec {
  /** The path relative to the repository root. */
  readonly name: string;
  readonly file: string;
  readonly text: string;
}

export function shippedSpecs(): Spec[] {
  return [
    path.join(repoRoot, "experiments"),
    path.join(repoRoot, "stdlib"),
    path.join(repoRoot, "test", "fixtures", "examples"),
  ]
    .flatMap((dir) => arlFilesBelow(dir, { skipDirs: new Set(["node_modules"]) }))
    .sort()
    .map((file) => ({ name: path.relative(repoRoot, file), file, text: readFileSync(file, "utf8") }));
}
