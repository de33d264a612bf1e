// `arl fmt [--check | --write] FILES|DIRS...`: the canonical formatter on the command line.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { Diagnostic } from "../../diagnostics/diagnostic.js";
import { displayPath } from "../../diagnostics/render.js";
import { format } from "../../language/printer.js";
import { expandArlPaths } from "../files.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError } from "../io.js";

const usage = `Usage: arl fmt [--check | --write] FILES|DIRS...

Formats .arl files in the one canonical style (there are no options). Directories are searched
for .arl files, skipping node_modules and hidden directories.
  (default)  print the formatted text; with several files, each after a '// ==> PATH <==' line
  --write    rewrite the files that change, in place
  --check    print the files that would change, and exit with status 3 if there are any
Files with syntax errors are left untouched and their errors printed.
Exit status: 0 done, 1 syntax errors or a failed write, 2 usage error or unreadable file,
3 (--check) some files are not formatted.`;

export const fmtCommand = defineCommand({
  name: "fmt",
  summary: "format .arl files in the canonical style",
  usage,
  options: { write: { type: "boolean", short: "w" }, check: { type: "boolean" } },
  async run(parsed, io) {
    const { write = false, check = false } = parsed.values;
    if (write && check) throw new UsageError("use either --write or --check, not both");
    const targets = parsed.positionals;
    if (targets.length === 0) throw new UsageError("no files given: name the .arl files or directories to format");

    const { files, missing, notRegular } = expandArlPaths(targets, io.cwd);
    // Refused before reading: a FIFO would block the read, a device such as /dev/zero never ends.
    if (notRegular.length > 0) throw new UsageError(`cannot read ${quoted(notRegular)}: not a regular file`);
    if (missing.length > 0) throw new UsageError(`cannot read ${quoted(missing)}: no such file or directory`);
    if (files.length === 0) throw new UsageError(`no .arl files found in ${targets.join(", ")}`);

    // Read everything first: an unreadable file stops the run before anything is written.
    const sources: { file: string; shown: string; bytes: Buffer }[] = [];
    for (const file of files) {
      try {
        sources.push({ file, shown: displayPath(file, io.cwd), bytes: await fs.readFile(file) });
      } catch (error) {
        throw new UsageError(`cannot read '${displayPath(file, io.cwd)}': ${reason(error)}`);
      }
    }

    let failed = false;
    let unformatted = 0;
    for (const { file, shown, bytes } of sources) {
      let text: string;
      try {
        text = utf8.decode(bytes);
      } catch {
        // Decoding with replacement characters and writing back would destroy the bytes.
        io.stderr(`${shown}:1:1: error[invalid-encoding]: the file is not valid UTF-8; it was left unchanged\n`);
        failed = true;
        continue;
      }
      const result = format(text, shown);
      if ("diagnostics" in result) {
        for (const d of result.diagnostics) io.stderr(`${diagnosticLine(d)}\n`);
        failed = true;
        continue;
      }
      const { output } = result;
      // Compared as bytes: a byte-order mark, which the decoder drops, is a change too.
      const changed = !Buffer.from(output, "utf8").equals(bytes);
      if (check) {
        if (changed) {
          io.stdout(`${shown}\n`);
          unformatted++;
        }
      } else if (write) {
        if (!changed) continue;
        try {
          await replaceFile(file, output);
        } catch (error) {
          io.stderr(`arl fmt: cannot write '${shown}': ${reason(error)}\n`);
          failed = true;
        }
      } else {
        if (sources.length > 1) io.stdout(`// ==> ${shown} <==\n`);
        io.stdout(output);
      }
    }
    if (failed) return ExitCode.errors;
    return unformatted > 0 ? ExitCode.unformatted : ExitCode.ok;
  },
});

const quoted = (paths: readonly string[]) => paths.map((p) => `'${p}'`).join(", ");

const utf8 = new TextDecoder("utf-8", { fatal: true });

function diagnosticLine(d: Diagnostic): string {
  return `${d.file}:${d.range.start.line}:${d.range.start.column}: ${d.severity}[${d.code}]: ${d.message}`;
}

function reason(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  return e.code ? `${e.code}${e.message ? ` (${e.message})` : ""}` : String(error);
}

/**
 * Replaces a file's content atomically: the text goes to a temporary file beside it (same
 * directory, so same file system), is flushed to disk, then renamed over the original. A crash
 * leaves either the old or the new file, never a truncated one. Symbolic links are followed.
 */
async function replaceFile(file: string, text: string): Promise<void> {
  const target = await fs.realpath(file);
  const { mode } = await fs.stat(target);
  const temp = path.join(
    path.dirname(target),
    `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`,
  );
  try {
    const handle = await fs.open(temp, "wx", mode & 0o7777);
    try {
      await handle.chmod(mode & 0o7777); // the creation mode is filtered by the umask
      await handle.writeFile(text, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, target);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
}
