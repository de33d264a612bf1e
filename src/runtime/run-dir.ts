// The run directory: DIR/<experiment>/<variant>/<hash12>-<time>/ with the plan, a manifest,
// the token buffer, metrics (one JSON line per iteration), eval results, checkpoints and a
// state file naming the last complete iteration. Everything is written so that a kill -9 at
// any moment loses at most the iteration in progress: appends are line- or frame-sized, and
// files that are replaced are replaced atomically.
import { appendFileSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync, truncateSync } from "node:fs";
import path from "node:path";
import { variantFileName, writeFileAtomic } from "../plan/files.js";
import type { Plan } from "../plan/schema.js";

export interface RunState {
  /** Iterations completed (0 before the first); the checkpoint of the last one is `checkpoint`. */
  readonly iteration: number;
  readonly checkpoint: string | null;
  readonly bufferOffset: number;
  readonly metricsOffset: number;
  readonly sftDone: boolean;
  readonly policyVersion: number;
  /** eval.base's summary, measured before the cold start and reported with iteration 1. */
  readonly baseEval?: Record<string, number>;
}

export const initialState: RunState = { iteration: 0, checkpoint: null, bufferOffset: 0, metricsOffset: 0, sftDone: false, policyVersion: 0 };

export class RunDirectory {
  private constructor(readonly dir: string) {}

  /** A new run directory for `plan` below `outDir`. */
  static create(outDir: string, plan: Plan, now = new Date()): RunDirectory {
    const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
    const base = path.join(outDir, variantFileName(plan.experiment), variantFileName(plan.variant));
    let dir = path.join(base, `${plan.hash.slice("sha256:".length, "sha256:".length + 12)}-${stamp}`);
    for (let n = 2; existsSync(dir); n++) dir = path.join(base, `${plan.hash.slice(7, 19)}-${stamp}-${n}`);
    mkdirSync(path.join(dir, "checkpoints"), { recursive: true });
    mkdirSync(path.join(dir, "eval"), { recursive: true });
    const run = new RunDirectory(dir);
    writeFileAtomic(run.planPath, `${JSON.stringify(plan, null, 2)}\n`);
    return run;
  }

  /** An existing run directory, for --resume. */
  static open(dir: string): RunDirectory {
    if (!existsSync(path.join(dir, "plan.json"))) throw new Error(`'${dir}' is not a run directory (it has no plan.json)`);
    return new RunDirectory(dir);
  }

  get planPath(): string {
    return path.join(this.dir, "plan.json");
  }
  get bufferPath(): string {
    return path.join(this.dir, "buffer.arlbuf");
  }
  get metricsPath(): string {
    return path.join(this.dir, "metrics.jsonl");
  }
  get manifestPath(): string {
    return path.join(this.dir, "manifest.json");
  }
  get statePath(): string {
    return path.join(this.dir, "state.json");
  }

  checkpointDir(iteration: number): string {
    return path.join(this.dir, "checkpoints", `iteration-${String(iteration).padStart(5, "0")}`);
  }

  /** eval/iteration-NNNNN.jsonl, or eval/base.jsonl for the policy before the cold start. */
  evalPath(iteration: number | "base"): string {
    return path.join(this.dir, "eval", iteration === "base" ? "base.jsonl" : `iteration-${String(iteration).padStart(5, "0")}.jsonl`);
  }

  readPlan(): unknown {
    return JSON.parse(readFileSync(this.planPath, "utf8")) as unknown;
  }

  readState(): RunState {
    if (!existsSync(this.statePath)) return initialState;
    return { ...initialState, ...(JSON.parse(readFileSync(this.statePath, "utf8")) as Partial<RunState>) };
  }

  /** Commits an iteration: the state file is the single point that says it is complete. */
  writeState(state: RunState): void {
    writeFileAtomic(this.statePath, `${JSON.stringify(state, null, 2)}\n`);
  }

  writeManifest(manifest: object): void {
    writeFileAtomic(this.manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  }

  appendMetrics(line: object): void {
    appendDurable(this.metricsPath, `${JSON.stringify(line)}\n`);
  }

  get metricsSize(): number {
    return existsSync(this.metricsPath) ? statSync(this.metricsPath).size : 0;
  }

  writeEval(iteration: number | "base", rows: readonly object[]): void {
    writeFileAtomic(this.evalPath(iteration), rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
  }

  removeCheckpoint(dir: string): void {
    if (path.dirname(dir) === path.join(this.dir, "checkpoints")) rmSync(dir, { recursive: true, force: true });
  }

  /** Drops what an interrupted iteration left after the last committed state. */
  rollBackTo(state: RunState): void {
    if (existsSync(this.metricsPath) && statSync(this.metricsPath).size > state.metricsOffset) truncateSync(this.metricsPath, state.metricsOffset);
    const keep = state.checkpoint ? path.basename(state.checkpoint) : undefined;
    for (const entry of readdirSync(path.join(this.dir, "checkpoints"))) {
      const n = Number(/^iteration-(\d+)/.exec(entry)?.[1]);
      if (entry !== keep && (!Number.isFinite(n) || n > state.iteration)) rmSync(path.join(this.dir, "checkpoints", entry), { recursive: true, force: true });
    }
    for (const entry of readdirSync(path.join(this.dir, "eval"))) {
      const n = Number(/^iteration-(\d+)/.exec(entry)?.[1]);
      if (Number.isFinite(n) && n > state.iteration) rmSync(path.join(this.dir, "eval", entry), { force: true });
    }
  }

  readMetrics(): Record<string, unknown>[] {
    if (!existsSync(this.metricsPath)) return [];
    return readFileSync(this.metricsPath, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

function appendDurable(file: string, text: string): void {
  appendFileSync(file, text);
  const fd = openSync(file, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
