// External environments as subprocesses speaking JSON lines on stdin/stdout, one process per
// episode (isolated). Requests: {"op":"reset","task","seed"}, {"op":"step","call":{name,
// arguments}}, {"op":"outcome"}, {"op":"close"}; each answered by one line: {"observation",
// "signals", "terminated"} / {"signals"} / {} or {"error": "..."}. Timeouts, crashes and
// malformed answers are env errors (not policy failures); reset is retried. When the process
// ends, so does everything it started: its process group and every process carrying its mark
// (children that called setsid; src/contracts/process-mark.ts). Sandboxed, it sees the folders
// its command needs read-only, and never the run directories of this process's runs.
import { execa, type ResultPromise } from "execa";
import { createInterface } from "node:readline";
import {
  EnvError,
  type EnvInstance,
  type EnvKind,
  type Observation,
  type Signals,
  type StepResult,
} from "../../contracts/env.js";
import type { ToolCall } from "../../contracts/tool-calls.js";
import type { PlanEnv } from "../../plan/schema.js";
import { defined } from "../../contracts/checked.js";
import { killGroup, OWN_PROCESS_GROUP, trackGroup, type TrackedGroup } from "../../contracts/process-group.js";
import { newProcessMark } from "../../contracts/process-mark.js";
import { episodeCgroup, type EpisodeCgroup } from "../../contracts/sandbox-cgroup.js";
import {
  limitHit,
  limitsOf,
  sandboxHostCheck,
  programPaths,
  rlimitPrefix,
  runsFolder,
  sandboxCommand,
  sandboxEnv,
  sandboxFor,
} from "../../contracts/sandbox.js";

type SubprocessEnv = Extract<PlanEnv, { kind: "subprocess" }>;

/**
 * The run directories of the runs this process provisioned: every sandboxed env process hides
 * them (their buffers, logs and manifests are no episode's business), whichever run it is of.
 */
const runDirs = new Set<string>();

/** Longest answer line read from an env process; past it the process is killed (readline would buffer any length). */
export const MAX_ANSWER_LINE_BYTES = 8 * 1024 * 1024;

class SubprocessInstance implements EnvInstance {
  private child: ResultPromise | undefined;
  /** The running process's group and mark, cleared once it exited. */
  private tracked: TrackedGroup | undefined;
  private lines: AsyncIterator<string> | undefined;
  private stderr = "";
  /** Set when the process wrote an answer line past MAX_ANSWER_LINE_BYTES (it was killed). */
  private overflowed = false;
  /** Set when the process wrote more than sandbox.output_bytes (it was killed). */
  private tooMuchOutput = false;
  /** The process runs in the episode sandbox (docs/envs.md#what-an-episode-can-reach). */
  private sandboxed = false;
  /** The running process's pids cgroup (arl runs as root: RLIMIT_NPROC does not bind it). */
  private cgroup: EpisodeCgroup | undefined;

  constructor(
    private readonly env: SubprocessEnv,
    private readonly task: number,
    private readonly seed: number,
  ) {}

  private start(): { child: ResultPromise; lines: AsyncIterator<string> } {
    const where = sandboxFor(this.env.sandbox);
    if ("refusal" in where) throw new EnvError(where.refusal, "unavailable");
    // Its own process group: a terminal's Ctrl-C reaches the runtime alone, which closes the episode.
    const mark = newProcessMark();
    this.sandboxed = "bwrap" in where;
    const cwd = process.cwd();
    const argv =
      "bwrap" in where
        ? sandboxCommand(
            {
              bwrap: where.bwrap,
              cwd,
              readOnly: programPaths(this.env.command, cwd, process.env.PATH),
              hidden: [...runDirs].flatMap((dir) => [runsFolder(dir, cwd), dir]),
              network: this.env.sandbox.network,
              env: sandboxEnv(mark.env),
              limits: limitsOf(this.env.sandbox),
            },
            [...rlimitPrefix(limitsOf(this.env.sandbox)), ...this.env.command],
          )
        : this.env.command;
    this.cgroup?.dispose();
    this.cgroup = "bwrap" in where ? episodeCgroup(this.env.sandbox.processes) : undefined;
    const [file, ...args] = this.cgroup ? this.cgroup.wrap(argv) : argv;
    const child = execa(defined(file, "the env's command"), args, {
      env: this.sandboxed ? sandboxEnv(mark.env) : mark.env,
      extendEnv: !this.sandboxed,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      reject: false,
      buffer: false,
      ...OWN_PROCESS_GROUP,
    });
    this.tracked = trackGroup(child, mark);
    let written = 0;
    const count = (c: Buffer) => {
      written += c.length;
      if (written > this.env.sandbox.output_bytes && !this.tooMuchOutput) {
        this.tooMuchOutput = true;
        killGroup(child.pid);
      }
    };
    child.stderr.on("data", (c: Buffer) => {
      count(c);
      this.stderr = (this.stderr + c.toString("utf8")).slice(-2000);
    });
    let sinceNewline = 0;
    this.tooMuchOutput = false;
    child.stdout.on("data", (c: Buffer) => {
      count(c);
      const newline = c.lastIndexOf(0x0a);
      sinceNewline = newline < 0 ? sinceNewline + c.length : c.length - newline - 1;
      if (sinceNewline > MAX_ANSWER_LINE_BYTES && !this.overflowed) {
        this.overflowed = true;
        killGroup(child.pid);
      }
    });
    this.overflowed = false;
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    this.lines = lines;
    this.child = child;
    return { child, lines };
  }

  private async request(message: object): Promise<Record<string, unknown>> {
    const { child, lines } = this.child && this.lines ? { child: this.child, lines: this.lines } : this.start();
    const line = lines.next();
    defined(child.stdin, "the env process's stdin").write(`${JSON.stringify(message)}\n`);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.env.timeout_s * 1000);
    });
    const answer = await Promise.race([line, timeout]).finally(() => clearTimeout(timer));
    if (answer === "timeout") {
      await this.kill();
      throw new EnvError(
        `env process did not answer '${(message as { op: string }).op}' within ${this.env.timeout_s} s`,
        "timeout",
      );
    }
    // Checked first: readline hands over the cut-off line when the killed process ends.
    if (this.overflowed) {
      await this.kill();
      throw new EnvError(
        `env process answered '${(message as { op: string }).op}' with a line longer than ${MAX_ANSWER_LINE_BYTES} bytes; it was stopped`,
        "protocol",
      );
    }
    if (this.tooMuchOutput) {
      await this.kill();
      throw new EnvError(
        `env process wrote more than sandbox.output_bytes ${this.env.sandbox.output_bytes} bytes to stdout and stderr; it was stopped`,
        "protocol",
      );
    }
    if (answer.done) {
      const tail = this.stderr.trim().split("\n").slice(-3).join(" | ");
      // The process has closed its stdout; its status says whether a limit ended it.
      const result = await Promise.race([child, new Promise<undefined>((r) => setTimeout(() => r(undefined), 2000))]);
      const limit = this.sandboxed
        ? limitHit(result?.exitCode ?? null, result?.signal ?? null, this.stderr, limitsOf(this.env.sandbox))
        : undefined;
      if (limit !== undefined)
        throw new EnvError(`env process ${limit} and was stopped${tail ? `: ${tail}` : ""}`, "crash");
      throw new EnvError(`env process exited${tail ? `: ${tail}` : ""}`, "crash");
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.value);
    } catch {
      throw new EnvError(`env process answered with a line that is not JSON: ${answer.value.slice(0, 80)}`, "protocol");
    }
    if (!parsed || typeof parsed !== "object")
      throw new EnvError("env process answered with something other than a JSON object", "protocol");
    const obj = parsed as Record<string, unknown>;
    if (typeof obj.error === "string") throw new EnvError(`env reported an error: ${obj.error}`, "crash");
    return obj;
  }

  async reset(): Promise<Observation> {
    let last: EnvError | undefined;
    for (let attempt = 0; attempt <= this.env.retries; attempt++) {
      try {
        const r = await this.request({ op: "reset", task: this.task, seed: this.seed });
        // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the wire value as the env sent it, whatever its type
        return { text: String(r.observation ?? ""), signals: signals(r.signals) };
      } catch (error) {
        if (!(error instanceof EnvError)) throw error;
        last = error;
        await this.kill();
      }
    }
    throw defined(last, "the error of the last reset attempt");
  }

  async step(call: ToolCall): Promise<StepResult> {
    const r = await this.request({ op: "step", call });
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the wire value as the env sent it, whatever its type
    return { text: String(r.observation ?? ""), signals: signals(r.signals), terminated: r.terminated === true };
  }

  async outcome(): Promise<Signals> {
    return signals((await this.request({ op: "outcome" })).signals);
  }

  async close(): Promise<void> {
    if (!this.child) return;
    try {
      const stdin = defined(this.child.stdin, "the env process's stdin");
      stdin.write(`${JSON.stringify({ op: "close" })}\n`);
      stdin.end();
    } catch {
      // Already gone.
    }
    const child = this.child;
    const timer = setTimeout(() => killGroup(child.pid), 2000);
    await this.child;
    clearTimeout(timer);
    await this.tracked?.cleared;
    this.child = undefined;
    this.cgroup?.dispose();
    this.cgroup = undefined;
  }

  private async kill(): Promise<void> {
    if (!this.child) return;
    killGroup(this.child.pid);
    await this.child;
    await this.tracked?.cleared;
    this.child = undefined;
    this.lines = undefined;
    this.cgroup?.dispose();
    this.cgroup = undefined;
  }
}

function signals(v: unknown): Signals {
  if (!v || typeof v !== "object") return {};
  const out: Record<string, number | boolean | string> = {};
  for (const [k, x] of Object.entries(v)) {
    // JSON.parse reads 1e400 as Infinity: never a usable signal, and it would poison the reward.
    if (typeof x === "number" && !Number.isFinite(x))
      throw new EnvError(`env process answered signal "${k}" = ${x}, which is not a finite number`, "protocol");
    if (typeof x === "number" || typeof x === "boolean" || typeof x === "string") out[k] = x;
  }
  return out;
}

export const subprocessEnv: EnvKind<SubprocessEnv> = {
  kind: "subprocess",
  async create(env, task, seed) {
    return new SubprocessInstance(env, task, seed);
  },
  async provision(_env, context) {
    runDirs.add(context.runDir);
  },
  vocabulary() {
    return [];
  },
  hostCheck(env) {
    return Promise.resolve(sandboxHostCheck(env.sandbox));
  },
};
