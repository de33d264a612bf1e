// The run's trackers (plan.tracking, docs/tracking.md): one sidecar process, `python -m
// arl_tracking` from runtime-gpu/, started beside the trainer and fed JSON lines: the plan as
// configuration, every committed metrics line, and the eval tables at the end. Trackers record;
// they never hold up or stop a run: writes are queued on the sidecar's stdin and never awaited,
// and a sidecar that cannot start, reports a failing tracker or dies is a warning in the run log,
// counted in metrics.jsonl as `tracker_errors`. Only the first metrics line waits (at most
// READY_WAIT_MS) for the trackers to be open, so that one that cannot start is counted from it;
// a sidecar that has reported its failure is not waited for.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import type { Plan } from "../../plan/schema.js";
import { killGroup, OWN_PROCESS_GROUP, trackGroup } from "../../contracts/process-group.js";
import { pythonCandidates, RUNTIME_GPU_DIR } from "../../contracts/python.js";

/** How long the first metrics line waits for the trackers to be open. */
const READY_WAIT_MS = 30_000;
/** How long closing waits for the trackers to flush (W&B online uploads what is left). */
const CLOSE_WAIT_MS = 60_000;
/** Queued bytes beyond which requests are dropped (and counted) rather than held in memory. */
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;
const STDERR_LINES = 20;

type Values = Record<string, number>;

/** The numbers of a metrics line under slash-joined keys (`reward_terms/solved`, `eval/pass@1`, `sft/epochs/0/train_nll`). */
function trackedValues(line: object, prefix = ""): Values {
  const out: Values = {};
  for (const [key, value] of Object.entries(line)) {
    const name = prefix ? `${prefix}/${key}` : key;
    if (typeof value === "number" && Number.isFinite(value)) out[name] = value;
    else if (value !== null && typeof value === "object") Object.assign(out, trackedValues(value as object, name));
  }
  return out;
}

/** mlflow.tracking_uri as MLflow takes it: a URI with a scheme as written, a folder as a file: URI (relative to `root`). */
function mlflowUri(written: string | null, runDir: string, root: string): string {
  if (written === null) return pathToFileURL(path.join(runDir, "tracking", "mlruns")).href;
  if (/^[A-Za-z][A-Za-z0-9+.-]+:/.test(written)) return written;
  return pathToFileURL(path.resolve(root, written)).href;
}

/** One table per eval file (eval/base, eval/iteration-NNNNN), its columns those of its rows in order. */
function evalTables(runDir: string): { name: string; columns: string[]; rows: unknown[][] }[] {
  const dir = path.join(runDir, "eval");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .map((file) => {
      const records = readFileSync(path.join(dir, file), "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const columns = [...new Set(records.flatMap((r) => Object.keys(r)))];
      return {
        name: `eval/${file.slice(0, -".jsonl".length)}`,
        columns,
        rows: records.map((r) => columns.map((c) => r[c] ?? null)),
      };
    });
}

export interface TrackingOptions {
  readonly plan: Plan;
  readonly runDir: string;
  /** The last committed iteration (0 for a new run): a resume continues the trackers' runs after it. */
  readonly resumeAfter: number;
  /** The folder a relative mlflow.tracking_uri is relative to (the run's data root). */
  readonly dataRoot: string | undefined;
  readonly log: (line: string) => void;
}

/** The trackers of one run; with none enabled every method does nothing. */
export class RunTracking {
  private errors = 0;
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly stderrTail: string[] = [];
  private ready: Promise<void> = Promise.resolve();
  private waited = false;
  private closing = false;
  private exited: Promise<void> = Promise.resolve();
  private overflowed = false;
  /** Its end is already reported (it failed to start, or was stopped after the close wait). */
  private endReported = false;

  private constructor(
    private readonly enabled: boolean,
    private readonly log: (line: string) => void,
  ) {}

  /** Starts the sidecar when the plan enables a tracker; returns at once (nothing here waits for it). */
  static start(options: TrackingOptions): RunTracking {
    const { plan, log } = options;
    const runDir = path.resolve(options.runDir);
    const t = plan.tracking;
    const tracking = new RunTracking(t.tensorboard || t.wandb !== null || t.mlflow !== null, log);
    if (!tracking.enabled) return tracking;
    const python = pythonCandidates()[0] ?? "python3";
    const env = {
      ...process.env,
      PYTHONPATH: [RUNTIME_GPU_DIR, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter),
    };
    // Its own process group: a Ctrl-C in the terminal is the runtime's to handle, which closes it.
    // Started in runtime-gpu/, so that nothing in the user's folder shadows the libraries.
    const child = spawn(python, ["-m", "arl_tracking"], {
      cwd: RUNTIME_GPU_DIR,
      env,
      stdio: ["pipe", "pipe", "pipe"],
      ...OWN_PROCESS_GROUP,
    });
    trackGroup(child);
    tracking.child = child;
    let readyNow: () => void = () => undefined;
    tracking.ready = new Promise<void>((resolve) => (readyNow = resolve));
    tracking.exited = new Promise<void>((resolve) => {
      child.on("error", (error) => {
        tracking.endReported = true; // its close, if one follows, is this failure
        tracking.fail(`could not start the trackers' sidecar (${python} -m arl_tracking): ${error.message}`);
        tracking.child = undefined;
        readyNow();
        resolve();
      });
      // close, not exit: every event it printed has been read by then.
      child.on("close", (code, signal) => {
        if (!tracking.endReported && (!tracking.closing || code !== 0)) {
          const tail = tracking.stderrTail.length > 0 ? `; its last lines: ${tracking.stderrTail.join(" | ")}` : "";
          tracking.fail(`the trackers' sidecar ended (${signal ? `signal ${signal}` : `exit status ${code}`})${tail}`);
        }
        tracking.child = undefined;
        readyNow();
        resolve();
      });
    });
    child.stdin.on("error", () => undefined); // a dead sidecar is reported by its exit
    createInterface({ input: child.stderr }).on("line", (line) => {
      tracking.stderrTail.push(line);
      if (tracking.stderrTail.length > STDERR_LINES) tracking.stderrTail.shift();
    });
    createInterface({ input: child.stdout }).on("line", (line) => tracking.event(line, readyNow));
    tracking.send({
      op: "config",
      dir: path.join(runDir, "tracking"),
      name: `${plan.experiment}/${plan.variant}`,
      resume_after: options.resumeAfter,
      plan,
      tensorboard: t.tensorboard,
      wandb: t.wandb,
      mlflow: t.mlflow && {
        tracking_uri: mlflowUri(t.mlflow.tracking_uri, runDir, options.dataRoot ?? process.cwd()),
        experiment: t.mlflow.experiment ?? plan.experiment,
      },
    });
    return tracking;
  }

  private fail(message: string): void {
    this.errors++;
    this.log(`warning: tracking: ${message}; the run goes on`);
  }

  private event(line: string, readyNow: () => void): void {
    let event: { event?: string; tracker?: string; message?: string; trackers?: string[] };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      return; // not an event: a library wrote to the sidecar's stdout
    }
    if (event.event === "ready") {
      this.log(`tracking: ${(event.trackers ?? []).join(", ") || "no tracker"} open`);
      readyNow();
    } else if (event.event === "error") {
      const hint = /ModuleNotFoundError|ImportError/.test(event.message ?? "")
        ? " (install runtime-gpu/requirements.txt into the Python arl uses: $ARL_PYTHON or .venv)"
        : "";
      this.fail(`${event.tracker ?? "?"}: ${event.message ?? "failed"}${hint}`);
      // The sidecar's own error before `ready` is its config failing (RUN/tracking not a folder):
      // no tracker will open, so nothing waits for one.
      if (event.tracker === "sidecar") readyNow();
    }
  }

  private send(request: object): void {
    const child = this.child;
    if (!child || this.closing) return;
    if (child.stdin.writableLength > MAX_QUEUED_BYTES) {
      if (!this.overflowed)
        this.fail(
          `the sidecar is not keeping up (${MAX_QUEUED_BYTES >> 20} MiB queued); requests are dropped until it catches up`,
        );
      this.overflowed = true;
      return;
    }
    this.overflowed = false;
    child.stdin.write(`${JSON.stringify(request)}\n`);
  }

  /**
   * What the metrics line says of the trackers: `{ tracker_errors }` when any is enabled, else
   * nothing. The first call waits until they are open (at most READY_WAIT_MS).
   */
  async counts(): Promise<{ tracker_errors?: number }> {
    if (!this.enabled) return {};
    if (!this.waited) {
      this.waited = true;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, READY_WAIT_MS)));
      await Promise.race([this.ready, late]);
      clearTimeout(timer);
    }
    return { tracker_errors: this.errors };
  }

  /** A committed metrics line, at its iteration. */
  metrics(line: { readonly iteration: number }): void {
    const { iteration, ...rest } = line;
    this.send({ op: "metrics", step: iteration, values: trackedValues(rest) });
  }

  /** The run ended: the eval tables of its directory, at `step` (its last committed iteration), then close. */
  async finish(runDir: string, step: number): Promise<void> {
    if (!this.enabled) return;
    try {
      for (const table of evalTables(runDir)) this.send({ op: "table", step, ...table });
    } catch (error) {
      this.fail(`could not read the eval tables: ${(error as Error).message}`);
    }
    await this.close();
  }

  /** Asks the sidecar to flush and close, waiting at most `waitMs`, then stops it; never throws. */
  async close(waitMs = CLOSE_WAIT_MS): Promise<void> {
    const child = this.child;
    if (!child || this.closing) return this.exited;
    child.stdin.end(`${JSON.stringify({ op: "close" })}\n`);
    this.closing = true;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), waitMs)));
    const outcome = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (outcome === "late") {
      this.fail(`the trackers did not close within ${waitMs / 1000} s; stopped`);
      this.endReported = true;
      killGroup(child.pid);
    }
  }
}
