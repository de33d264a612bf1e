// The identity of the embedded trainer's build: the sha256 of its own modules (this folder's
// entry point and every module it imports by a relative path, transitively), announced in the
// handshake's versions as `code`. TRAINER_VERSION stays the same when a kernel is rewritten and
// its floats change in the last bits; this digest does not, so what is keyed by it (the cached
// cold starts, src/runtime/run/cold-start/cache.ts) is never taken for another build's result.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Relative module specifiers of a JavaScript (or TypeScript) module: static, side-effect and dynamic imports, re-exports. */
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;

/** The file a relative specifier names: compiled `.js`, or its `.ts` source when run from the sources (tests). */
function moduleFile(from: string, specifier: string): string | undefined {
  const target = path.resolve(path.dirname(from), specifier);
  if (existsSync(target)) return target;
  const source = target.replace(/\.js$/, ".ts");
  return existsSync(source) ? source : undefined;
}

/** sha256 (hex) over the modules reachable from `entry` by relative imports, each by its path relative to the entry's folder and its bytes, in path order. */
export function codeDigest(entry: URL): string {
  const named = fileURLToPath(entry);
  const start = moduleFile(named, `./${path.basename(named)}`) ?? named;
  const root = path.dirname(start);
  const seen = new Map<string, Buffer>();
  const pending = [start];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    const bytes = readFileSync(file);
    seen.set(file, bytes);
    for (const m of bytes.toString("utf8").matchAll(RELATIVE_IMPORT)) {
      const next = m[1] === undefined ? undefined : moduleFile(file, m[1]);
      if (next !== undefined && !seen.has(next)) pending.push(next);
    }
  }
  const hash = createHash("sha256");
  const files = [...seen].map(([file, bytes]) => [path.relative(root, file).split(path.sep).join("/"), bytes] as const);
  for (const [name, bytes] of files.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    hash.update(`${name}\n${bytes.length}\n`);
    hash.update(bytes);
  }
  return hash.digest("hex");
}
