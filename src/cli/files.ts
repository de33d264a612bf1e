// Expanding command-line paths: files as given, directories to the .arl files below them.
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

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
    if (stat.isDirectory()) files.push(...arlFilesBelow(abs));
    else files.push(abs);
  }
  return { files: [...new Set(files)], missing };
}

function arlFilesBelow(dir: string): string[] {
  const out: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (e.name.startsWith(".")) continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIPPED_DIRS.has(e.name)) out.push(...arlFilesBelow(full));
    } else if (e.isFile() && e.name.endsWith(".arl")) out.push(full);
  }
  return out;
}
