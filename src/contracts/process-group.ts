// Child processes in their own process groups (docs/architecture.md, "Interrupts and resume").
// Ctrl-C in a terminal sends SIGINT to the terminal's whole foreground process group: a child in
// the runtime's group would die of it before the runtime could commit and shut it down. A child
// started with `detached: true` leads a group of its own, so only the runtime gets the signal;
// in exchange the runtime must end the whole group itself (a torchrun launcher's workers, a
// shell's children), on shutdown and on its own exit. A child that leaves the group (setsid) is
// found by the mark in its environment (process-mark.ts), where the caller marked its child.
import type { ChildProcess } from "node:child_process";
import { killMarked, killMarkedSync, type ProcessMark } from "./process-mark.js";

/** Spawn options for a child that leads its own process group (node's and execa's `detached`). */
export const OWN_PROCESS_GROUP = { detached: true } as const;

/** Groups started by this process and not yet ended: killed when this process exits. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;
/** Whether any tracked child was marked: only then is /proc read at exit. */
let anyMarked = false;

/**
 * Sends `signal` to every process of the group led by `pid` (a child started with
 * OWN_PROCESS_GROUP); no error when the group is gone. Never to `pid` alone: once the leader is
 * reaped its pid may be another process's.
 */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals = "SIGKILL"): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone (ESRCH).
  }
}

/** What trackGroup returns. */
export interface TrackedGroup {
  /** Resolves once the child has exited and what it left was killed: its group, and its marked processes. */
  readonly cleared: Promise<void>;
}

/**
 * Registers `child`, started with OWN_PROCESS_GROUP (and `mark.env` in its environment, when
 * given): when it exits, what is left of its group is killed and so is every process carrying its
 * mark (no stray grandchild lives on, in the group or out of it); if this process exits first, the
 * whole group is, and every process carrying any of its marks.
 */
export function trackGroup(child: ChildProcess, mark?: ProcessMark): TrackedGroup {
  const pid = child.pid;
  if (pid === undefined) return { cleared: Promise.resolve() };
  liveGroups.add(pid);
  if (mark !== undefined) anyMarked = true;
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Synchronous, so it also runs on process.exit(); a SIGKILL of this process runs nothing, and
    // then the children see their stdin end (a trainer exits on it: docs/protocol.md, "Order").
    process.on("exit", () => {
      for (const group of liveGroups) killGroup(group);
      if (anyMarked) killMarkedSync();
    });
  }
  const cleared = new Promise<void>((resolve) => {
    child.once("exit", () => {
      liveGroups.delete(pid);
      killGroup(pid);
      if (mark === undefined) resolve();
      else void killMarked(mark).finally(resolve);
    });
  });
  return { cleared };
}
