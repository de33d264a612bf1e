// A runtime killed with SIGKILL leaves no child behind (docs/architecture.md, "Interrupts and
// resume"): `bin/arl.js run` is killed mid-run, its trainer stopped first (SIGSTOP stands for a
// request that takes long: the trainer neither reads its stdin, which would end, nor writes), and
// every process it had started, directly or not, must be gone within seconds.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { pythonWithTorch } from "../../src/trainer/launch.js";
import { counterSubprocessEnv } from "../helpers/plans.js";

const arl = fileURLToPath(new URL("../../bin/arl.js", import.meta.url));
const hasProc = existsSync("/proc/self/stat");
const hasTorch = hasProc && spawnSync(pythonWithTorch(), ["-c", "import torch"], { stdio: "ignore" }).status === 0;

interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly state: string;
  /** Clock ticks since boot: with the pid, names one process even after its pid is reused. */
  readonly start: string;
  readonly cmdline: string;
}

function readProc(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // The command name in parentheses may hold spaces and parentheses: the fields follow the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "latin1").replaceAll("\0", " ");
    return { pid, state: fields[0]!, ppid: Number(fields[1]), start: fields[19]!, cmdline };
  } catch {
    return undefined;
  }
}

/** Every living descendant of `root`. */
function descendants(root: number): Proc[] {
  const all = readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .map((n) => readProc(Number(n)))
    .filter((p): p is Proc => p !== undefined);
  const found: Proc[] = [];
  const parents = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        found.push(p);
        grew = true;
      }
    }
  }
  return found;
}

/** Whether that very process still runs (a zombie has ended: only its parent's wait is missing). */
const alive = (p: Proc) => {
  const now = readProc(p.pid);
  return now !== undefined && now.start === p.start && now.state !== "Z";
};

async function until(what: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (what()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return what();
}

const spec = (backend: string) => `
experiment orphans {
  seed: 1
  policy {
    model: "builtin:tiny"
    sampling { temperature: 1.0, max_new_tokens: 24 }
  }
  ${counterSubprocessEnv(10)}
  harness { max_turns: 2, max_response_tokens: 24 }
  reward { success: outcome.success }
  algorithm { group_size: 2, advantage { baseline: leave_one_out } }
  rollout { tasks_per_batch: 2, iterations: 1000, concurrency: 4 }
  eval { every: 1000, tasks: 2, k: [1], before_training: false }
  resources { backend: ${backend} }
}
`;

/**
 * Runs the spec with bin/arl.js until its first iteration is done, stops the trainer (found by
 * `trainerArg` in its command line), kills arl with SIGKILL, and returns what it had started and
 * what of it still runs a few seconds later.
 */
async function killMidRun(backend: string, trainerArg: string): Promise<{ started: Proc[]; left: Proc[] }> {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-orphans-"));
  writeFileSync(path.join(dir, "orphans.arl"), spec(backend));
  const child = spawn(process.execPath, [arl, "run", "orphans.arl", "--out", "runs"], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const pid = child.pid!;
  let started: Proc[] = [];
  try {
    const begun = await until(() => /iteration 1\/1000/.test(output), 240_000);
    expect(begun, output).toBe(true);
    started = descendants(pid);
    const trainers = started.filter((p) => p.cmdline.includes(trainerArg));
    expect(trainers.length, started.map((p) => p.cmdline).join("\n")).toBeGreaterThan(0);
    for (const t of trainers) process.kill(t.pid, "SIGSTOP");
    process.kill(pid, "SIGKILL");
    await until(() => started.every((p) => !alive(p)), 10_000);
    return { started, left: started.filter(alive) };
  } finally {
    child.kill("SIGKILL");
    // Whatever the runtime left is the test's to end, so that a failure leaks nothing.
    for (const p of started) if (alive(p)) process.kill(p.pid, "SIGKILL");
  }
}

describe.skipIf(!hasProc)("a runtime killed with SIGKILL", () => {
  it("leaves no process behind with the embedded trainer busy in a request", async () => {
    const { started, left } = await killMidRun("local", "embedded/main.js");
    // The trainer and the env's processes at least.
    expect(started.length).toBeGreaterThan(1);
    expect(left.map((p) => p.cmdline)).toEqual([]);
  }, 300_000);

  it.skipIf(!hasTorch)(
    "leaves no process behind with the PyTorch trainer busy in a request",
    async () => {
      const { started, left } = await killMidRun("torch", "arl_trainer");
      expect(started.some((p) => p.cmdline.includes("arl_trainer"))).toBe(true);
      expect(left.map((p) => p.cmdline)).toEqual([]);
    },
    300_000,
  );
});
