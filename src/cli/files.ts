// Expanding command-line paths: files as given, directories to the .arl files below them.
import { statSync } from "node:fs";
import path from "node:path";
import { arlFilesBelow } from "../language/arl-files.js";

const SKIPPED_DIRS = new Set(["node_modules", "dist"]);

export interface ExpandedPaths {
  readonly files: string[];
  /** Paths that do not exist or cannot be read. */
  readonly missing: string[];
}

export function expandArlPaths(args: readonly string[], cwd: string): ExpandedPaths {
  const files: string[] = [];
  const missing: string[] = [];
  for (const arg of args) {
    const abs = path.resolve(cwd, arg);
    let stat;
    try {
      stat = statSync(abs);
    } catch {
      missing.push(arg);
      continue;
    }
    if (stat.isDirectory()) files.push(...arlFilesBelow(abs, { skipDirs: SKIPPED_DIRS }));
    else files.push(abs);
  }
  return { files: [...new Set(files)], missing };
}
