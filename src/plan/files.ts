// Writing plan and lock files: atomically (a temporary file in the same folder, then a
// rename), so that a reader never sees half a file and an interrupted run leaves the old one.
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

export function writeFileAtomic(target: string, text: string): void {
  mkdirSync(path.dirname(target), { recursive: true });
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  try {
    writeFileSync(temp, text);
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * A variant name as a file name: letters, digits and `._=,+-@` are kept, anything else
 * (`/`, `:`, spaces) is percent-encoded, so that distinct names stay distinct files.
 */
export function variantFileName(variant: string): string {
  let out = "";
  for (const ch of variant) {
    if (/[A-Za-z0-9._=,+@-]/.test(ch)) out += ch;
    else for (const byte of Buffer.from(ch, "utf8")) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out.startsWith(".") ? `%2E${out.slice(1)}` : out;
}
