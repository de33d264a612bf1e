// Confinement of the files a spec or a plan names (imports, data files): a written path is
// resolved against its base folder and must stay inside one of the allowed roots, judged on the
// real path (symbolic links resolved), so that neither an absolute path, `..` nor a link can
// make the compiler, the language server or the runtime read a file outside the project.
// Nothing is read here: callers read a file only after it passed.
import { realpathSync } from "node:fs";
import path from "node:path";

export type Confined =
  | {
      readonly ok: true;
      /** Absolute path as written (links kept): what diagnostics, plans and module keys show. */
      readonly path: string;
      /** The same file with every symbolic link resolved. */
      readonly real: string;
    }
  | {
      readonly ok: false;
      /** absolute: written as an absolute path; outside: `..` leaves the roots; link: a symbolic link leads out of them. */
      readonly reason: "absolute" | "outside" | "link";
      /** Absolute path as written (links kept); never the link's target, which lies outside. */
      readonly path: string;
    };

/** Whether `file` lies strictly below `dir` (lexically: both must already be absolute and normalised). */
export function isInside(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

/**
 * `file` with symbolic links resolved. For a file that does not exist (yet), its longest
 * existing ancestor is resolved and the rest appended, so that a link to a folder outside is
 * seen even when the file below it is missing.
 */
function realPath(file: string): string {
  const rest: string[] = [];
  let head = path.resolve(file);
  for (;;) {
    try {
      return path.join(realpathSync.native(head), ...rest);
    } catch {
      const parent = path.dirname(head);
      if (parent === head) return path.resolve(file);
      rest.unshift(path.basename(head));
      head = parent;
    }
  }
}

/** Whether a path is absolute on POSIX or on Windows (`C:\...`, `\\server\...`): both are refused on every platform. */
function isAbsolutePath(written: string): boolean {
  return path.posix.isAbsolute(written) || path.win32.isAbsolute(written);
}

/**
 * Confines the absolute path `file` to `roots` (absolute folders): refused when it lexically
 * leaves every root (`..`), or when its real path lies outside every root's real path (a link).
 */
export function confine(file: string, roots: readonly string[]): Confined {
  const lexical = path.resolve(file);
  if (!roots.some((root) => isInside(lexical, path.resolve(root))))
    return { ok: false, reason: "outside", path: lexical };
  const real = realPath(lexical);
  if (!roots.some((root) => isInside(real, realPath(root)))) return { ok: false, reason: "link", path: lexical };
  return { ok: true, path: lexical, real };
}

/** A path written in a spec or plan, resolved against the folder `base` and confined to `roots`; an absolute one is refused. */
export function resolveConfined(written: string, base: string, roots: readonly string[]): Confined {
  if (isAbsolutePath(written)) return { ok: false, reason: "absolute", path: path.resolve(base, written) };
  return confine(path.resolve(base, written), roots);
}

/** Why a path was refused, for messages ("… is refused: it …"). */
export function refusalReason(reason: "absolute" | "outside" | "link", root: string): string {
  switch (reason) {
    case "absolute":
      return `it is an absolute path; paths must be relative and stay inside ${root}`;
    case "outside":
      return `'..' leads out of ${root}`;
    case "link":
      return `it goes through a symbolic link that leads out of ${root}`;
  }
}
