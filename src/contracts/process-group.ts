// Child processes in their own process groups (docs/architecture.md, "Interrupts and resume").
// Ctrl-C in a terminal sends SIGINT to the terminal's whole foreground process group: a child in
// the runtime's group would die of it before the runtime could commit and shut it down. A child
// started with `detached: true` leads a group of its own, so only the runtime gets the signal;
// in exchange the runtime must end the whole group itself (a torchrun launcher's workers, a
// shell's children), on shutdown and on its own exit. A child that leaves the group (setsid) is
// found by the mark in its environment (process-mark.ts), where the caller marked its child.
// A runtime killed with SIGKILL runs no exit hook: the orphan reaper (orphan-reaper.ts), started
// with the first group, then kills what is left.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { killMarked, killMarkedSync, processMarkToken, type ProcessMark } from "./process-mark.js";

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

/** The orphan reaper's stdin, once started; null when it cannot be (running from the sources, where it is not compiled). */
let reaper: NodeJS.WritableStream | null | undefined;

/** Tells the orphan reaper a line ("+PID", "-PID"), starting it first when needed. */
function tellReaper(line: string): void {
  if (reaper === undefined) reaper = startReaper();
  reaper?.write(`${line}\n`);
}

function startReaper(): NodeJS.WritableStream | null {
  const script = fileURLToPath(new URL("./orphan-reaper.js", import.meta.url));
  if (!existsSync(script)) return null;
  // A group and session of its own, so that a terminal's Ctrl-C or hang-up does not end it with
  // the runtime; unreferenced, so that it never keeps the runtime alive.
  const child = spawn(process.execPath, [script, processMarkToken()], {
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
  });
  child.on("error", () => undefined);
  child.unref();
  const stdin = child.stdin as Socket;
  stdin.on("error", () => undefined);
  stdin.unref();
  return stdin;
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
  tellReaper(`+${pid}`);
  if (mark !== undefined) anyMarked = true;
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Synchronous, so it also runs on process.exit(); a SIGKILL of this process runs nothing, and
    // then the orphan reaper kills what is left.
    process.on("exit", () => {
      for (const group of liveGroups) killGroup(group);
      if (anyMarked) killMarkedSync();
    });
  }
  const cleared = new Promise<void>((resolve) => {
    child.once("exit", () => {
      liveGroups.delete(pid);
      killGroup(pid);
      tellReaper(`-${pid}`);
      if (mark === undefined) resolve();
      else void killMarked(mark).finally(resolve);
    });
  });
  return { cleared };
}
