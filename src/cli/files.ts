// Expanding command-line paths: files as given, directories to the .arl files below them.
import { statSync } from "node:fs";
import path from "node:path";
import { arlFilesBelow } from "../language/arl-files.js";

const SKIPPED_DIRS = new Set(["node_modules", "dist"]);

export interface ExpandedPaths {
  readonly files: string[];
  /** Paths that do not exist or cannot be read (`notRegular` among them). */
  readonly missing: string[];
  /**
   * Paths that name neither a directory nor a regular file (after links): a FIFO blocks its
   * reader, a device such as /dev/zero never ends. Commands refuse them rather than read them.
   */
  readonly notRegular: string[];
}

export function expandArlPaths(args: readonly string[], cwd: string): ExpandedPaths {
  const files: string[] = [];
  const missing: string[] = [];
  const notRegular: string[] = [];
  for (const arg of args) {
    const abs = path.resolve(cwd, arg);
    let stat;
    try {
      stat = statSync(abs);
    } catch {
      missing.push(arg);
      continue;
    }
    if (stat.isDirectory()) {
      for (const file of arlFilesBelow(abs, { skipDirs: SKIPPED_DIRS })) files.push(file);
    } else if (stat.isFile()) files.push(abs);
    else {
      missing.push(arg);
      notRegular.push(arg);
    }
  }
  return { files: [...new Set(files)], missing, notRegular };
}
