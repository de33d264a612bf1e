// Whether a process still runs, for the tests of what outlives an episode.
import { readFileSync } from "node:fs";

/** Whether `pid` runs (a killed orphan may linger as a zombie until init reaps it). */
export function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** SIGKILL to `pid` when it still runs: a failing test leaves nothing behind. */
export function killIfRunning(pid: number): void {
  if (!running(pid)) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone meanwhile.
  }
}
