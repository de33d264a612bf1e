// One episode's checkout of a swe task: a private copy of the snapshot with the bug in, and the
// file tools over it. Every path is relative to the checkout and confined to it (no absolute
// path, no `..`, nothing behind a link); reads and listings are bounded. The checkout changes
// only through `edit` (exact text, found once), so it is always the snapshot plus the agent's
// edits; test runs work on copies of it (run-tests.ts).
import { cp, lstat, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/** A tool's refusal: shown to the model as the tool's answer, the episode goes on. */
export class ToolRefusal extends Error {}

/** Files larger than this are not read or searched (a snapshot's data blobs). */
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const MAX_LINE_CHARS = 300;

export class Workspace {
  private constructor(readonly root: string) {}

  /** A fresh copy of `snapshot` with `file` replaced by `text` (the task's bug). */
  static async create(snapshot: string, file: string, text: string): Promise<Workspace> {
    const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "arl-swe-")));
    const repo = path.join(root, "repo");
    await cp(snapshot, repo, { recursive: true });
    const ws = new Workspace(repo);
    await writeFile(ws.resolve(file), text);
    return ws;
  }

  /** The absolute path of `rel` in the checkout, or a refusal saying why not. */
  resolve(rel: unknown, what = "path"): string {
    if (typeof rel !== "string")
      throw new ToolRefusal(`error: "${what}" must be a string, a path relative to the repository root`);
    const clean = rel.trim().replace(/^\.\/+/, "");
    if (clean.startsWith("/") || clean.split(/[\\/]/).includes(".."))
      throw new ToolRefusal(
        `error: ${JSON.stringify(rel.slice(0, 200))} is outside the repository; give a path relative to its root`,
      );
    return path.join(this.root, clean === "" ? "." : clean);
  }

  private rel(abs: string): string {
    return path.relative(this.root, abs) || ".";
  }

  private async plainFile(abs: string, rel: string): Promise<void> {
    let st;
    try {
      st = await lstat(abs);
    } catch {
      throw new ToolRefusal(`error: no file ${JSON.stringify(rel)}; list_files shows what there is`);
    }
    if (st.isDirectory())
      throw new ToolRefusal(`error: ${JSON.stringify(rel)} is a folder; list_files shows what is in it`);
    if (!st.isFile()) throw new ToolRefusal(`error: ${JSON.stringify(rel)} is not a plain file`);
    if (st.size > MAX_FILE_BYTES)
      throw new ToolRefusal(`error: ${JSON.stringify(rel)} is larger than ${MAX_FILE_BYTES} bytes`);
  }

  /** Every file below `dir` (relative paths, sorted), at most `max`. */
  async list(dir: unknown, max: number): Promise<string> {
    const start = this.resolve(dir ?? ".");
    const st = await lstat(start).catch(() => undefined);
    if (!st?.isDirectory()) throw new ToolRefusal(`error: no folder ${JSON.stringify(String(dir))}`);
    const out: string[] = [];
    let more = 0;
    const walk = async (abs: string): Promise<void> => {
      const entries = (await readdir(abs, { withFileTypes: true })).sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
      );
      for (const e of entries) {
        const p = path.join(abs, e.name);
        if (e.isDirectory()) await walk(p);
        else if (e.isFile()) {
          if (out.length < max) out.push(this.rel(p));
          else more++;
        }
      }
    };
    await walk(start);
    return out.length === 0
      ? "(no files)"
      : [...out, ...(more > 0 ? [`... and ${more} more files (list a folder to see them)`] : [])].join("\n");
  }

  /** Lines `from`..`to` of a file (1-based, inclusive), numbered, at most `maxChars` characters. */
  async read(file: unknown, from: unknown, to: unknown, maxChars: number): Promise<string> {
    const abs = this.resolve(file);
    const rel = this.rel(abs);
    await this.plainFile(abs, rel);
    const lines = (await readFile(abs, "utf8")).split("\n");
    if (lines.at(-1) === "") lines.pop();
    const first = typeof from === "number" && Number.isInteger(from) && from >= 1 ? from : 1;
    const last =
      typeof to === "number" && Number.isInteger(to) && to >= first ? Math.min(to, lines.length) : lines.length;
    const out: string[] = [];
    let chars = 0;
    let n = first;
    for (; n <= last; n++) {
      const line = `${String(n).padStart(5)}  ${lines[n - 1] ?? ""}`;
      if (chars + line.length + 1 > maxChars) break;
      out.push(line);
      chars += line.length + 1;
    }
    const head = `${rel} (${lines.length} lines)`;
    const cut = n <= last ? [`... cut at ${maxChars} characters; read from line ${n} on with start_line`] : [];
    return [head, ...out, ...cut].join("\n");
  }

  /** The lines of the files below `dir` that contain `pattern` (plain text), as path:line: text, at most `max`. */
  async search(pattern: unknown, dir: unknown, max: number): Promise<string> {
    if (typeof pattern !== "string" || pattern === "")
      throw new ToolRefusal('error: search needs "pattern", the text to look for');
    const start = this.resolve(dir ?? ".");
    const hits: string[] = [];
    let more = 0;
    const visit = async (abs: string): Promise<void> => {
      const st = await lstat(abs).catch(() => undefined);
      if (st?.isDirectory()) {
        const names = (await readdir(abs)).sort();
        for (const name of names) await visit(path.join(abs, name));
        return;
      }
      if (!st?.isFile() || st.size > MAX_FILE_BYTES) return;
      const text = await readFile(abs, "utf8");
      if (!text.includes(pattern) || text.includes("\0")) return;
      text.split("\n").forEach((line, i) => {
        if (!line.includes(pattern)) return;
        if (hits.length < max)
          hits.push(
            `${this.rel(abs)}:${i + 1}: ${line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}...` : line}`,
          );
        else more++;
      });
    };
    await visit(start);
    if (hits.length === 0) return `no line contains ${JSON.stringify(pattern.slice(0, 200))}`;
    return [...hits, ...(more > 0 ? [`... and ${more} more lines`] : [])].join("\n");
  }

  /** Replaces `old` by `new` in a file where `old` occurs exactly once; returns the lines changed. */
  async edit(
    file: unknown,
    old: unknown,
    replacement: unknown,
  ): Promise<{ readonly path: string; readonly message: string }> {
    const abs = this.resolve(file);
    const rel = this.rel(abs);
    if (typeof old !== "string" || old === "")
      throw new ToolRefusal('error: edit needs "old", the exact text to replace (non-empty)');
    if (typeof replacement !== "string") throw new ToolRefusal('error: edit needs "new", the text to put in its place');
    await this.plainFile(abs, rel);
    const text = await readFile(abs, "utf8");
    const at = text.indexOf(old);
    if (at < 0)
      throw new ToolRefusal(
        `error: the text of "old" is not in ${rel} (it must match exactly, spaces and line breaks included); nothing changed`,
      );
    if (text.indexOf(old, at + 1) >= 0)
      throw new ToolRefusal(
        `error: the text of "old" occurs more than once in ${rel}; add lines around it so that it matches once; nothing changed`,
      );
    await writeFile(abs, text.slice(0, at) + replacement + text.slice(at + old.length));
    const line = text.slice(0, at).split("\n").length;
    return {
      path: rel,
      message: `Edited ${rel} at line ${line}: ${old.split("\n").length} lines replaced by ${replacement.split("\n").length}.`,
    };
  }

  /** The text of a file of the checkout, or undefined when it is not there. */
  async text(rel: string): Promise<string | undefined> {
    return readFile(path.join(this.root, rel), "utf8").catch(() => undefined);
  }

  async close(): Promise<void> {
    await rm(path.dirname(this.root), { recursive: true, force: true });
  }
}

/** Whether `rel` is one of `paths` or lies below one of them. */
export function isUnder(rel: string, paths: readonly string[]): boolean {
  const clean = path.normalize(rel);
  return paths.some((p) => {
    const q = path.normalize(p).replace(/\/$/, "");
    return clean === q || clean.startsWith(`${q}/`);
  });
}

/** Lines removed plus lines added between two texts (a line diff: common ends trimmed, then the longest common subsequence). */
export function changedLines(a: string, b: string): number {
  if (a === b) return 0;
  const x = a.split("\n");
  const y = b.split("\n");
  let s = 0;
  while (s < x.length && s < y.length && x[s] === y[s]) s++;
  let e = 0;
  while (e < x.length - s && e < y.length - s && x[x.length - 1 - e] === y[y.length - 1 - e]) e++;
  const xs = x.slice(s, x.length - e);
  const ys = y.slice(s, y.length - e);
  if (xs.length * ys.length > 4_000_000) return xs.length + ys.length;
  let prev = new Array<number>(ys.length + 1).fill(0);
  for (const xi of xs) {
    const row = new Array<number>(ys.length + 1).fill(0);
    for (let j = 0; j < ys.length; j++)
      row[j + 1] = xi === ys[j] ? (prev[j] ?? 0) + 1 : Math.max(prev[j + 1] ?? 0, row[j] ?? 0);
    prev = row;
  }
  const common = prev[ys.length] ?? 0;
  return xs.length + ys.length - 2 * common;
}
