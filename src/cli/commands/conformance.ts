// `arl conformance FILE... [--trainer local|torch]`: checks the RL math against the shared
// conformance vectors (test/conformance/*.json), in-process or through a trainer process
// (the protocol's eval_op: local = the embedded trainer, torch = runtime-gpu's).
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import {
  referenceBackend,
  trainerNames,
  type ConformanceBackend,
  type TrainerName,
} from "../../conformance/backend.js";
import { BackendUnavailable, processBackend } from "../../conformance/process-backend.js";
import { describeFailure, runVectors } from "../../conformance/run.js";
import { parseVectorFile, type VectorFile } from "../../conformance/vectors.js";
import { defineCommand } from "../command.js";
import { ExitCode, UsageError } from "../io.js";

const usage = `Usage: arl conformance FILES|DIRS... [--trainer local|torch]

Evaluates every case of the conformance vector files (directories: their *.json files) and
prints one line per failing case, then 'N passed, M failed'.
--trainer evaluates every op in a trainer process through the trainer protocol's eval_op,
instead of the in-process TypeScript reference: local = the embedded CPU trainer (builtin:tiny),
torch = the PyTorch trainer (python3 -m arl_trainer with PYTHONPATH=runtime-gpu; ARL_PYTHON
names another interpreter).
Exit status: 0 all pass, 1 some case fails, 2 usage error or unreadable/malformed file.`;

export const conformanceCommand = defineCommand({
  name: "conformance",
  summary: "check the RL math against conformance vectors",
  usage,
  options: { trainer: { type: "string" } },
  async run(parsed, io) {
    const trainer = parsed.values.trainer;
    if (trainer !== undefined && !(trainerNames as readonly string[]).includes(trainer))
      throw new UsageError(`--trainer must be one of ${trainerNames.join(", ")}, not '${trainer}'`);
    if (parsed.positionals.length === 0) throw new UsageError("give at least one vector file or directory");

    const { files, unreadable } = expandJsonPaths(parsed.positionals, io.cwd);
    const vectors: VectorFile[] = [];
    let malformed = false;
    for (const { abs, shown } of files) {
      let text: string;
      try {
        text = readFileSync(abs, "utf8");
      } catch {
        unreadable.push(shown);
        continue;
      }
      const result = parseVectorFile(shown, text);
      if (result.ok) vectors.push(result.vectors);
      else {
        malformed = true;
        for (const p of result.problems) io.stderr(`arl conformance: ${p}\n`);
      }
    }
    for (const u of unreadable) io.stderr(`arl conformance: cannot read '${u}'\n`);

    let backend: ConformanceBackend = referenceBackend;
    if (trainer !== undefined && vectors.length > 0) {
      try {
        backend = await processBackend(trainer as TrainerName);
      } catch (error) {
        if (!(error instanceof BackendUnavailable)) throw error;
        io.stderr(`arl conformance: ${error.message}\n`);
        for (const line of error.stderrTail.slice(-10)) io.stderr(`  ${line}\n`);
        return ExitCode.usage;
      }
    }
    let results;
    try {
      results = await runVectors(vectors, backend);
    } finally {
      await backend.close();
    }
    for (const r of results) if (!r.passed) io.stdout(`${describeFailure(r)}\n`);
    const failed = results.filter((r) => !r.passed).length;
    io.stdout(`${results.length - failed} passed, ${failed} failed\n`);
    if (malformed || unreadable.length > 0) return ExitCode.usage;
    if (files.length === 0) {
      io.stderr(`arl conformance: no .json files found in ${parsed.positionals.join(", ")}\n`);
      return ExitCode.usage;
    }
    return failed > 0 ? ExitCode.errors : ExitCode.ok;
  },
});

interface Target {
  readonly abs: string;
  /** As the user named it (relative to cwd for files found in a directory). */
  readonly shown: string;
}

function expandJsonPaths(args: readonly string[], cwd: string): { files: Target[]; unreadable: string[] } {
  const files: Target[] = [];
  const unreadable: string[] = [];
  for (const arg of args) {
    const abs = path.resolve(cwd, arg);
    try {
      if (statSync(abs).isDirectory()) {
        const names = readdirSync(abs)
          .filter((n) => n.endsWith(".json") && !n.startsWith("."))
          .sort();
        for (const n of names) files.push({ abs: path.join(abs, n), shown: path.join(arg, n) });
      } else files.push({ abs, shown: arg });
    } catch {
      unreadable.push(arg);
    }
  }
  return { files, unreadable };
}
