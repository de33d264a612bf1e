// The episode sandbox's process limit where RLIMIT_NPROC cannot hold it: the kernel does not
// apply that rlimit to root, so when arl runs as root each sandboxed episode gets a pids cgroup
// of its own (docs/envs.md#what-an-episode-can-reach) whose pids.max is sandbox.processes, where
// this machine lets root make one: a cgroup v2 hierarchy with the pids controller, or the v1
// pids hierarchy. A shell joins the cgroup and then becomes bubblewrap (exec), so every process
// of the episode starts inside it; the sandbox neither mounts /sys nor keeps a capability, so
// none can leave it. Forks past the limit fail with EAGAIN, as under the rlimit. Where no pids
// cgroup can be made, a root episode's forks are bounded by its wall time alone (documented).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/** The sandbox's own processes besides the episode's: bubblewrap outside and its init inside. */
const SANDBOX_OWN = 2;

/** One episode's cgroup: the words that start a command inside it, and its removal once the command has ended. */
export interface EpisodeCgroup {
  /** `argv` started by a shell that first joins the cgroup (then `exec`s it). */
  wrap(argv: readonly string[]): [string, ...string[]];
  /** Removes the cgroup (retried briefly while the kernel releases its last processes). */
  dispose(): void;
}

/** This process's folder of episode cgroups, made on first use; null where none can be made. */
let parent: string | null | undefined;
let made = 0;
const live = new Set<string>();

/** The pids hierarchy's folder of this process's cgroup: cgroup v2 with pids, else v1's pids; null if neither. */
function ownPidsCgroup(): string | null {
  let mounts: string[];
  let own: string[];
  try {
    mounts = readFileSync("/proc/self/mountinfo", "utf8").split("\n");
    own = readFileSync("/proc/self/cgroup", "utf8").split("\n");
  } catch {
    return null;
  }
  const candidates: string[] = [];
  for (const line of mounts) {
    // id parent dev root mountpoint options [optional...] - fstype source superoptions
    const [before, after] = line.split(" - ");
    const fields = before?.split(" ") ?? [];
    const [fstype, , superOptions] = after?.split(" ") ?? [];
    const root = fields[3];
    const mountpoint = fields[4];
    if (root === undefined || mountpoint === undefined) continue;
    const place = (cgroupPath: string | undefined) =>
      cgroupPath === undefined ? undefined : path.join(mountpoint, path.relative(root, cgroupPath) || ".");
    if (fstype === "cgroup2") {
      const controllers = (() => {
        try {
          return readFileSync(path.join(mountpoint, "cgroup.controllers"), "utf8");
        } catch {
          return "";
        }
      })();
      const dir = place(own.find((l) => l.startsWith("0::"))?.slice(3));
      if (dir && /\bpids\b/.test(controllers)) candidates.unshift(dir);
    } else if (fstype === "cgroup" && (superOptions ?? "").split(",").includes("pids")) {
      const dir = place(own.find((l) => /^\d+:([^:]*,)?pids(,[^:]*)?:/.test(l))?.replace(/^[^:]*:[^:]*:/, ""));
      if (dir) candidates.push(dir);
    }
  }
  return candidates[0] ?? null;
}

/** The folder episode cgroups are made in (this process's, removed at its exit), or null where root cannot make them here. */
function cgroupParent(): string | null {
  if (parent !== undefined) return parent;
  parent = null;
  if (process.platform !== "linux" || process.getuid?.() !== 0) return parent;
  const own = ownPidsCgroup();
  if (own === null) return parent;
  removeStale(own);
  const dir = path.join(own, `arl-${process.pid}`);
  try {
    mkdirSync(dir);
    // cgroup v2: the children's pids controller is switched on here (allowed: it holds no process).
    if (existsSync(path.join(dir, "cgroup.subtree_control")))
      writeFileSync(path.join(dir, "cgroup.subtree_control"), "+pids");
    const probe = path.join(dir, "probe");
    mkdirSync(probe);
    const ok = existsSync(path.join(probe, "pids.max"));
    rmdirSync(probe);
    if (!ok) throw new Error("no pids.max");
  } catch {
    try {
      rmdirSync(dir);
    } catch {
      // Not made.
    }
    return parent;
  }
  parent = dir;
  process.on("exit", () => {
    for (const cg of live) removeQuietly(cg);
    removeQuietly(dir);
  });
  return parent;
}

/** The empty cgroups of arl processes that are gone (killed before their exit hook ran). */
function removeStale(own: string): void {
  let names: string[];
  try {
    names = readdirSync(own);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^arl-(\d+)$/.exec(name)?.[1] ?? NaN);
    if (!Number.isInteger(pid) || pid === process.pid || alive(pid)) continue;
    const dir = path.join(own, name);
    try {
      for (const child of readdirSync(dir, { withFileTypes: true }))
        if (child.isDirectory()) removeQuietly(path.join(dir, child.name));
    } catch {
      // Gone meanwhile.
    }
    removeQuietly(dir);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function removeQuietly(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch {
    return !existsSync(dir);
  }
}

/**
 * A pids cgroup for one sandboxed episode whose process limit RLIMIT_NPROC cannot hold (arl runs
 * as root), or undefined: not root (the rlimit holds), or no pids cgroup can be made here.
 */
export function episodeCgroup(processes: number): EpisodeCgroup | undefined {
  const dir = cgroupParent();
  if (dir === null) return undefined;
  const cg = path.join(dir, `e${++made}`);
  try {
    mkdirSync(cg);
    writeFileSync(path.join(cg, "pids.max"), String(processes + SANDBOX_OWN));
  } catch {
    removeQuietly(cg);
    return undefined;
  }
  live.add(cg);
  return {
    wrap: (argv) => ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cg, ...argv],
    dispose() {
      if (removeQuietly(cg)) {
        live.delete(cg);
        return;
      }
      // Its last processes are still being released: try again shortly (and at exit).
      let tries = 0;
      const timer = setInterval(() => {
        if (removeQuietly(cg) || ++tries >= 50) {
          clearInterval(timer);
          live.delete(cg);
        }
      }, 100);
      timer.unref();
    },
  };
}

/** Whether a sandboxed episode's process limit holds here: not root (RLIMIT_NPROC), or root with a pids cgroup it can make. */
export function processLimitHolds(): boolean {
  return process.getuid?.() !== 0 || cgroupParent() !== null;
}
