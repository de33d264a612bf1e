// Finding .arl files below a folder: one walk for the CLI's directory arguments, the stdlib
// listing in "cannot find" hints, and import completion in the editor.
import { readdirSync, type Dirent } from "node:fs";
import path from "node:path";

export interface WalkOptions {
  /** Folder names not descended into (besides hidden ones). */
  readonly skipDirs?: ReadonlySet<string>;
  /** How many folder levels below `dir` to visit (default: all). */
  readonly maxDepth?: number;
}

/** Absolute paths of the .arl files below `dir`, in sorted order; hidden files and folders are skipped. */
export function arlFilesBelow(dir: string, options: WalkOptions = {}): string[] {
  const out: string[] = [];
  const walk = (folder: string, depth: number) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (e.name.startsWith(".")) continue;
      const full = path.join(folder, e.name);
      if (e.isDirectory()) {
        if (!options.skipDirs?.has(e.name) && depth < (options.maxDepth ?? Number.POSITIVE_INFINITY))
          walk(full, depth + 1);
      } else if (e.isFile() && e.name.endsWith(".arl")) out.push(full);
    }
  };
  walk(dir, 0);
  return out;
}

/** `a/b/c.arl` below `dir` as the import path `a/b/c`. */
export function importPathBelow(dir: string, file: string): string {
  return path
    .relative(dir, file)
    .split(path.sep)
    .join("/")
    .replace(/\.arl$/, "");
}
