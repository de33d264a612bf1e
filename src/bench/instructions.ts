// Instruction counts: a figure that does not move with the load on a shared machine. Node runs
// under `valgrind --tool=callgrind` (it counts every instruction the process executes, JIT code
// included; no cache or branch simulation, its cheapest mode) with V8 made repeatable: no
// background threads (compilation and GC on the main thread, so their work is counted in a fixed
// order) and fixed hash and random seeds. What one run of a case costs is the difference between
// a process that does the setup, the warm-ups and one run, and one that does the same less that
// run: node's start, the imports and the warm-ups cancel out.
//
// The command, for one case (see frontend-instructions-child.ts for the cases):
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//     node --single-threaded --hash-seed=1 --random-seed=1 dist/bench/frontend-instructions-child.js '<job JSON>'
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const VALGRIND = "valgrind";
const NODE_FLAGS = ["--single-threaded", "--hash-seed=1", "--random-seed=1"] as const;

/** Whether valgrind can be started at all. */
export function valgrindAvailable(): boolean {
  const probe = spawnSync(VALGRIND, ["--version"], { encoding: "utf8" });
  return probe.status === 0;
}

/** The "Collected : N" line callgrind prints when the process exits. */
function collectedInstructions(stderr: string): number | undefined {
  const match = /==\d+== Collected : (\d+)/.exec(stderr);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** Instructions the whole node process executes for `script` with `args`, under callgrind. */
function countProcess(script: URL, args: readonly string[]): number {
  const result = spawnSync(
    VALGRIND,
    [
      "--tool=callgrind",
      "--callgrind-out-file=/dev/null",
      process.execPath,
      ...NODE_FLAGS,
      fileURLToPath(script),
      ...args,
    ],
    {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const count = collectedInstructions(result.stderr);
  if (result.status !== 0 || count === undefined) {
    throw new Error(
      `valgrind --tool=callgrind on ${fileURLToPath(script)} failed (exit ${result.status ?? result.signal}): ${result.stderr.split("\n").slice(-8).join("\n")}`,
    );
  }
  return count;
}

/** Instructions of one run of a case: the process with `warmup` + 1 runs less the one with `warmup` runs. */
export function instructionsPerRun(script: URL, job: (runs: number) => readonly string[], warmup: number): number {
  const base = countProcess(script, job(warmup));
  const withRun = countProcess(script, job(warmup + 1));
  return withRun - base;
}
