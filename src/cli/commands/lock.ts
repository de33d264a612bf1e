// `arl lock FILE`: records every variant's plan hash in FILE.lock, beside the spec.
import { displayPath } from "../../diagnostics/render.js";
import { writeFileAtomic } from "../../plan/files.js";
import { buildLock, lockPath, renderLock } from "../../plan/lock.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError } from "../io.js";
import { compileAndLower } from "./plan.js";

const usage = `Usage: arl lock FILE

Writes FILE.lock beside the spec: JSON listing every experiment's variants with their plan
hashes, and the stdlib version. Check it in: 'arl check' then reports lock-mismatch when a
variant's meaning changes, or variants are added or removed, until the lock is written again.
Refuses (exit 1) when the spec has errors; diagnostics are printed as by 'arl check'.
Exit status: 0 lock written, 1 errors, 2 usage error or unreadable file.`;

export const lockCommand = defineCommand({
  name: "lock",
  summary: "write FILE.lock with every variant's plan hash",
  usage,
  options: {},
  async run(parsed, io) {
    const [target, ...extra] = parsed.positionals;
    if (target === undefined || extra.length > 0) throw new UsageError("give exactly one .arl file");
    const compiled = compileAndLower(target, io, "lock", io.stdout);
    if (typeof compiled === "number") return compiled;
    const lock = buildLock(compiled.file, compiled.plans);
    const destination = lockPath(compiled.file);
    writeFileAtomic(destination, renderLock(lock));
    io.stdout(
      `wrote ${displayPath(destination, io.cwd)} (${compiled.plans.length} variant${compiled.plans.length === 1 ? "" : "s"})\n`,
    );
    return ExitCode.ok;
  },
});
