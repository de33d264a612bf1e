// The .arl specs the repository ships (experiments/, stdlib/), and the shared examples where the
// checkout has them (../shared/examples beside the main checkout; absent from a worktree).
import { existsSync, readFileSync } from "node:fs";
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
  return [path.join(repoRoot, "experiments"), path.join(repoRoot, "stdlib"), path.join(repoRoot, "shared", "examples"), path.join(repoRoot, "..", "shared", "examples")]
    .filter((dir) => existsSync(dir))
    .flatMap((dir) => arlFilesBelow(dir, { skipDirs: new Set(["node_modules"]) }))
    .sort()
    .map((file) => ({ name: path.relative(repoRoot, file), file, text: readFileSync(file, "utf8") }));
}
