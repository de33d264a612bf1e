// Marks in a child's environment, to find what it left behind (docs/gateway.md#agent-programs,
// "What outlives an episode"). A process group does not hold a child that calls setsid (a daemon,
// `start_new_session`, node's `detached`), and once its parent exits it is re-parented to init, so
// neither the group nor the parent chain leads back to it. Its environment does: every process
// inherits the environment it was started with, through fork, setsid and re-parenting, and Linux
// shows it in /proc/PID/environ. Each marked child gets ARL_PROCESS_MARK=<this process's token>.<n>;
// what carries a mark is killed when its child ends (the mark) and when this process ends (the
// token: everything any of its children left). Elsewhere (no /proc) finding does nothing.
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";

const MARK_VARIABLE = "ARL_PROCESS_MARK";

/** This process's token: the prefix of every mark it hands out. */
const TOKEN = randomBytes(12).toString("hex");
let counter = 0;

/** One child's mark: what to add to its environment. */
export interface ProcessMark {
  readonly value: string;
  readonly env: Readonly<Record<string, string>>;
}

/** A fresh mark, for one child and everything it starts. */
export function newProcessMark(): ProcessMark {
  const value = `${TOKEN}.${++counter}`;
  return { value, env: { [MARK_VARIABLE]: value } };
}

/** The mark in one environ block (NUL-separated NAME=VALUE entries), or undefined. */
function markIn(environ: Buffer): string | undefined {
  const key = Buffer.from(`${MARK_VARIABLE}=`);
  let at = environ.indexOf(key);
  // A match must begin an entry, not sit inside another variable's value.
  while (at > 0 && environ[at - 1] !== 0) at = environ.indexOf(key, at + 1);
  if (at < 0) return undefined;
  const end = environ.indexOf(0, at);
  return environ.subarray(at + key.length, end < 0 ? environ.length : end).toString("latin1");
}

/** This process's token: what the orphan reaper (orphan-reaper.ts) is given to find this process's marks after it is gone. */
export function processMarkToken(): string {
  return TOKEN;
}

/** Whether `mark` is the one sought, or (sought undefined) any mark of the token's. */
const matches = (mark: string | undefined, sought: string | undefined, token: string) =>
  mark !== undefined && (sought === undefined ? mark.startsWith(`${token}.`) : mark === sought);

const pidsOf = (names: readonly string[]) =>
  names
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((pid) => pid !== process.pid);

/**
 * A marked process may fork between being read and being killed; its child carries the mark too,
 * so rounds go on until one finds no process it had not killed yet (bounded, as a fork bomb could
 * outrun any number).
 */
const MAX_ROUNDS = 20;

/** One round over what was read of /proc: kills (SIGKILL) the marked processes not killed yet; how many it found. */
function killFound(
  read: readonly { readonly pid: number; readonly environ: Buffer }[],
  sought: string | undefined,
  killed: Set<number>,
  token = TOKEN,
): number {
  let found = 0;
  for (const { pid, environ } of read) {
    if (killed.has(pid) || !matches(markIn(environ), sought, token)) continue;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone since it was read, or not ours to signal.
    }
    killed.add(pid);
    found++;
  }
  return found;
}

// Reads of /proc that fail (no /proc, a process gone, another user's) find nothing.
const NOTHING = Buffer.alloc(0);

/**
 * Kills (SIGKILL) every process carrying `mark`, or with no mark, every process carrying any mark
 * of `token`'s (by default this process's); returns how many. Synchronous: for an exit hook.
 */
export function killMarkedSync(mark?: ProcessMark, token = TOKEN): number {
  const killed = new Set<number>();
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let names: string[];
    try {
      names = readdirSync("/proc");
    } catch {
      break;
    }
    const read = pidsOf(names).map((pid) => {
      try {
        return { pid, environ: readFileSync(`/proc/${pid}/environ`) };
      } catch {
        return { pid, environ: NOTHING };
      }
    });
    if (killFound(read, mark?.value, killed, token) === 0) break;
  }
  return killed.size;
}

/** killMarkedSync without blocking the event loop: what an episode's end uses. */
export async function killMarked(mark?: ProcessMark): Promise<number> {
  const killed = new Set<number>();
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const names = await readdir("/proc").catch(() => undefined);
    if (names === undefined) break;
    const read = await Promise.all(
      pidsOf(names).map(async (pid) => ({ pid, environ: await readFile(`/proc/${pid}/environ`).catch(() => NOTHING) })),
    );
    if (killFound(read, mark?.value, killed) === 0) break;
  }
  return killed.size;
}
