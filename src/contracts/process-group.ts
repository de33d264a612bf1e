// Child processes in their own process groups (docs/architecture.md, "Interrupts and resume").
// Ctrl-C in a terminal sends SIGINT to the terminal's whole foreground process group: a child in
// the runtime's group would die of it before the runtime could commit and shut it down. A child
// started with `detached: true` leads a group of its own, so only the runtime gets the signal;
// in exchange the runtime must end the whole group itself (a torchrun launcher's workers, a
// shell's children), on shutdown and on its own exit.
import type { ChildProcess } from "node:child_process";

/** Spawn options for a child that leads its own process group (node's and execa's `detached`). */
export const OWN_PROCESS_GROUP = { detached: true } as const;

/** Groups started by this process and not yet ended: killed when this process exits. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

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

/**
 * Registers `child`, started with OWN_PROCESS_GROUP: when it exits, what is left of its group
 * is killed (no stray grandchild lives on), and if this process exits first, the whole group is.
 */
export function trackGroup(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined) return;
  liveGroups.add(pid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Synchronous, so it also runs on process.exit(); a SIGKILL of this process runs nothing, and
    // then the children see their stdin end (a trainer exits on it: docs/protocol.md, "Order").
    process.on("exit", () => {
      for (const group of liveGroups) killGroup(group);
    });
  }
  child.once("exit", () => {
    liveGroups.delete(pid);
    killGroup(pid);
  });
}
