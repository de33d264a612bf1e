// The run directory: DIR/<experiment>/<variant>/<hash12>-<time>/ with the plan, a manifest,
// the token buffer, metrics (one JSON line per iteration), eval results, checkpoints and a
// state file naming the last complete iteration. Everything is written so that a kill -9 at
// any moment loses at most the iteration in progress: appends are line- or frame-sized, and
// files that are replaced are replaced atomically. preflight.json holds the verdict of the checks
// before the first optimizer step.
import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
} from "node:fs";
import path from "node:path";
import * as z from "zod";
import { parsePlanFile, PlanFileError, variantFileName, writeFileAtomic } from "../plan/files.js";
import { planHash, sha256Hex } from "../plan/hash.js";
import type { Plan } from "../plan/schema.js";
import { RunningDigest, type FileCommit } from "../contracts/file-digest.js";
import type { PreflightReport } from "./preflight/batch.js";
import {
  coldStartCacheSchema,
  coldStartTimeSchema,
  sftProgressSchema,
  sftSummarySchema,
  type ColdStartCacheUse,
  type ColdStartTime,
  type SftProgress,
  type SftSummary,
} from "./cold-start-state.js";

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
  /** What the cold start trained on and its losses per epoch, reported with iteration 1. */
  readonly sft?: SftSummary;
  /** An interrupted cold start: how far it got (its checkpoint is `checkpoint`); absent once sftDone or before its first checkpoint. */
  readonly sftProgress?: SftProgress;
  /** Wall time of the phases before iteration 1 (eval.base and the cold start, over every session), reported with iteration 1. */
  readonly coldStartTime?: ColdStartTime;
  readonly coldStartCache?: ColdStartCacheUse;
  /** The hash of plan.json as this directory wrote it: a resume refuses a plan that hashes otherwise. */
  readonly planHash?: string;
  /**
   * Every committed file (path relative to the run directory) with its committed length and the
   * sha256 of those bytes. A resume refuses a file that is shorter, missing or different, and
   * cuts an append-only one that is longer back to its committed length.
   */
  readonly files?: Readonly<Record<string, FileCommit>>;
  /**
   * Why the run failed with nothing to train on (its first batch all env errors); absent while it
   * has not failed so. A resume that plays that batch again drops it with its next commit.
   */
  readonly failed?: string;
}

const initialState: RunState = {
  iteration: 0,
  checkpoint: null,
  bufferOffset: 0,
  metricsOffset: 0,
  sftDone: false,
  policyVersion: 0,
};

const fileCommitSchema = z.strictObject({
  bytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
const runStateSchema = z.object({
  iteration: z.number().int().nonnegative(),
  checkpoint: z.string().nullable(),
  bufferOffset: z.number().int().nonnegative(),
  metricsOffset: z.number().int().nonnegative(),
  sftDone: z.boolean(),
  policyVersion: z.number().int(),
  baseEval: z.record(z.string(), z.number()).optional(),
  sft: sftSummarySchema.optional(),
  sftProgress: sftProgressSchema.optional(),
  coldStartTime: coldStartTimeSchema.optional(),
  coldStartCache: coldStartCacheSchema.optional(),
  planHash: z.string().optional(),
  files: z.record(z.string(), fileCommitSchema).optional(),
  failed: z.string().optional(),
});

/** A run directory that cannot be resumed (or made) as it is: the message names the file and what is wrong. */
export class RunDirectoryError extends Error {}

/**
 * Makes folder `dir` and the missing ones above it, one at a time. Node's recursive mkdir never
 * returns below a folder that answers ENOENT to every new entry (/proc), and a file in the way
 * deserves its name in the message rather than ENOTDIR.
 */
export function makeFolders(dir: string): void {
  const missing: string[] = [];
  let at = path.resolve(dir);
  while (!existsSync(at) && path.dirname(at) !== at) {
    missing.push(at);
    at = path.dirname(at);
  }
  if (!statSync(at).isDirectory())
    throw new RunDirectoryError(
      `cannot make the folder '${dir}': '${at}' is a file, not a folder; give a path below a folder`,
    );
  for (const folder of missing.reverse()) {
    try {
      mkdirSync(folder);
    } catch (error) {
      const { code, message } = error as NodeJS.ErrnoException;
      if (code === "EEXIST" && statSync(folder).isDirectory()) continue;
      throw new RunDirectoryError(
        `cannot make the folder '${folder}' (${code ?? message}): ${path.dirname(folder)} does not take new folders; give a path on a file system arl can write to`,
      );
    }
  }
}

const METRICS = "metrics.jsonl";
const BUFFER = "buffer.arlbuf";

/** What resume verified: the running checksums of the append-only files, to continue from. */
export interface Recovered {
  readonly buffer: RunningDigest;
  /** The committed checkpoint in this directory (state.json names it by absolute path, which a moved or copied run directory does not keep). */
  readonly checkpoint: string | null;
}

export class RunDirectory {
  /** Running checksum of metrics.jsonl (seeded from the file when first needed). */
  private metricsDigest: RunningDigest | undefined;
  /** Eval files written (or verified on resume) since the directory was opened. */
  private readonly evalCommits = new Map<string, FileCommit>();

  private constructor(readonly dir: string) {}

  private metrics(): RunningDigest {
    this.metricsDigest ??= existsSync(this.metricsPath)
      ? RunningDigest.ofPrefix(this.metricsPath, this.metricsSize)
      : new RunningDigest();
    return this.metricsDigest;
  }

  /** A new run directory for `plan` below `outDir`. */
  static create(outDir: string, plan: Plan, now = new Date()): RunDirectory {
    const stamp = now
      .toISOString()
      .replace(/[-:]/g, "")
      .replace(/\.\d+Z$/, "Z");
    const base = path.join(outDir, variantFileName(plan.experiment), variantFileName(plan.variant));
    let dir = path.join(base, `${plan.hash.slice("sha256:".length, "sha256:".length + 12)}-${stamp}`);
    for (let n = 2; existsSync(dir); n++) dir = path.join(base, `${plan.hash.slice(7, 19)}-${stamp}-${n}`);
    makeFolders(outDir);
    makeFolders(path.join(dir, "checkpoints"));
    mkdirSync(path.join(dir, "eval"));
    const run = new RunDirectory(dir);
    writeFileAtomic(run.planPath, `${JSON.stringify(plan, null, 2)}\n`);
    // The commit record exists from the start, so that a missing one always means damage.
    const empty = { bytes: 0, sha256: sha256Hex("") };
    run.writeState({ ...initialState, planHash: planHash(plan), files: { [METRICS]: empty, [BUFFER]: empty } });
    return run;
  }

  /** An existing run directory, for --resume. */
  static open(dir: string): RunDirectory {
    if (!existsSync(dir))
      throw new RunDirectoryError(
        `'${dir}' does not exist; give the run directory that 'arl run' printed (OUT/<experiment>/<variant>/<hash>-<time>)`,
      );
    if (!statSync(dir).isDirectory())
      throw new RunDirectoryError(
        `'${dir}' is a file, not a run directory; give the folder that holds plan.json and state.json`,
      );
    if (!existsSync(path.join(dir, "plan.json")))
      throw new RunDirectoryError(
        `'${dir}' is not a run directory (it has no plan.json); give the folder that 'arl run' printed (OUT/<experiment>/<variant>/<hash>-<time>)`,
      );
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
  get preflightPath(): string {
    return path.join(this.dir, "preflight.json");
  }

  checkpointDir(iteration: number): string {
    return path.join(this.dir, "checkpoints", `iteration-${String(iteration).padStart(5, "0")}`);
  }

  /** The checkpoint of an interrupted cold start after `step` optimizer steps (replaced by the next one). */
  sftCheckpointDir(step: number): string {
    return path.join(this.dir, "checkpoints", `sft-step-${String(step).padStart(6, "0")}`);
  }

  /** eval/iteration-NNNNN.jsonl, or eval/base.jsonl for the policy before the cold start. */
  evalPath(iteration: number | "base"): string {
    return path.join(
      this.dir,
      "eval",
      iteration === "base" ? "base.jsonl" : `iteration-${String(iteration).padStart(5, "0")}.jsonl`,
    );
  }

  /**
   * The run's plan, validated, with its hash recomputed and compared with the one this
   * directory recorded when it wrote the plan (older directories: the plan's own `hash`).
   */
  readPlan(): Plan {
    const name = path.join(this.dir, "plan.json");
    const recorded = existsSync(this.statePath) ? this.readState().planHash : undefined;
    try {
      return parsePlanFile(
        readFileSync(this.planPath, "utf8"),
        name,
        recorded,
        "if another version of arl wrote it, it cannot be resumed by this version; otherwise restore it from a copy, or start a new run",
      );
    } catch (error) {
      if (error instanceof PlanFileError) throw new RunDirectoryError(error.message);
      throw error;
    }
  }

  /** The commit record; a missing, unreadable or malformed one is a RunDirectoryError. */
  readState(): RunState {
    const name = path.join(this.dir, "state.json");
    if (!existsSync(this.statePath)) {
      throw new RunDirectoryError(
        `${name} is missing: every run directory has one from its start, and without it nothing says which iterations were committed; restore it, or start a new run`,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(this.statePath, "utf8")) as unknown;
    } catch (error) {
      throw new RunDirectoryError(
        `${name} is not valid JSON (${(error as Error).message}): it was cut short or edited (arl replaces it atomically); restore it, or start a new run`,
      );
    }
    const parsed = runStateSchema.safeParse(json && typeof json === "object" ? { ...initialState, ...json } : json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new RunDirectoryError(
        `${name} is not a run's commit record: ${issue?.message ?? "schema mismatch"} at ${issue?.path.join(".") || "the top level"}; restore it, or start a new run`,
      );
    }
    return parsed.data;
  }

  /** Commits an iteration: the state file is the single point that says it is complete. */
  writeState(state: RunState): void {
    writeFileAtomic(this.statePath, `${JSON.stringify(state, null, 2)}\n`);
  }

  /**
   * What a commit records of the run's files: metrics and every eval file written so far (kept
   * here), and the buffer's `buffer` commit (the token buffer keeps its own running checksum).
   */
  committedFiles(buffer: FileCommit): Record<string, FileCommit> {
    return { [METRICS]: this.metrics().commit, [BUFFER]: buffer, ...Object.fromEntries(this.evalCommits) };
  }

  /** The preflight's verdict (run/preflight.ts), written once it ran. */
  writePreflight(report: PreflightReport): void {
    writeFileAtomic(this.preflightPath, `${JSON.stringify(report, null, 2)}\n`);
  }

  /** preflight.json, or undefined before the preflight ran (or when it is not a verdict). */
  readPreflight(): PreflightReport | undefined {
    if (!existsSync(this.preflightPath)) return undefined;
    try {
      const json = JSON.parse(readFileSync(this.preflightPath, "utf8")) as Partial<PreflightReport> | null;
      return json && typeof json.passed === "boolean" && Array.isArray(json.checks)
        ? (json as PreflightReport)
        : undefined;
    } catch {
      return undefined;
    }
  }

  writeManifest(manifest: object): void {
    writeFileAtomic(this.manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  }

  appendMetrics(line: object): void {
    const text = `${JSON.stringify(line)}\n`;
    const digest = this.metrics();
    appendDurable(this.metricsPath, text);
    digest.update(text);
  }

  get metricsSize(): number {
    return existsSync(this.metricsPath) ? statSync(this.metricsPath).size : 0;
  }

  writeEval(iteration: number | "base", rows: readonly object[]): void {
    const text = rows.map((r) => `${JSON.stringify(r)}\n`).join("");
    const file = this.evalPath(iteration);
    writeFileAtomic(file, text);
    this.evalCommits.set(path.relative(this.dir, file).split(path.sep).join("/"), {
      bytes: Buffer.byteLength(text),
      sha256: sha256Hex(text),
    });
  }

  removeCheckpoint(dir: string): void {
    if (path.dirname(dir) === path.join(this.dir, "checkpoints")) rmSync(dir, { recursive: true, force: true });
  }

  /**
   * Checks every file `state` committed and drops what an interrupted iteration left after it:
   * an append-only file longer than committed is cut back (a torn or uncommitted tail, said
   * through `log`); one that is shorter, missing or whose committed bytes changed is refused
   * with a RunDirectoryError, never continued with a hole. Uncommitted checkpoints and eval
   * files are removed.
   */
  recover(state: RunState, log: (line: string) => void = () => undefined): Recovered {
    const legacy = state.files === undefined;
    if (legacy && (state.iteration > 0 || state.sftDone))
      log("state.json was written by an older arl and records no checksums: checking the committed lengths only");
    const commitOf = (file: string, legacyBytes: number) =>
      state.files?.[file] ?? (legacy ? { bytes: legacyBytes } : undefined);
    const metricsCommit = commitOf(METRICS, state.metricsOffset);
    const bufferCommit = commitOf(BUFFER, state.bufferOffset);
    if (!metricsCommit || !bufferCommit)
      throw new RunDirectoryError(
        `${this.statePath} does not record ${metricsCommit ? BUFFER : METRICS}; restore it, or start a new run`,
      );
    const what = state.iteration > 0 ? `iterations 1-${state.iteration}` : "the run's start";
    const metrics = this.verifyAppendOnly(METRICS, metricsCommit, what, log);
    const buffer = this.verifyAppendOnly(BUFFER, bufferCommit, what, log);

    this.evalCommits.clear();
    for (const [file, commit] of Object.entries(state.files ?? {})) {
      if (file === METRICS || file === BUFFER) continue;
      const full = path.join(this.dir, file);
      const size = existsSync(full) ? statSync(full).size : undefined;
      if (size === undefined)
        throw new RunDirectoryError(
          `${full} is missing, but the run committed it (${commit.bytes} bytes); restore it, or start a new run`,
        );
      if (size !== commit.bytes || sha256Hex(readFileSync(full)) !== commit.sha256) {
        throw new RunDirectoryError(
          `${full} changed after it was committed (${size} bytes, ${commit.bytes} committed, or different content); restore it, or start a new run`,
        );
      }
      this.evalCommits.set(file, commit);
    }
    const checkpoint = state.checkpoint ? path.join(this.dir, "checkpoints", path.basename(state.checkpoint)) : null;
    if (checkpoint && !existsSync(checkpoint)) {
      throw new RunDirectoryError(
        `${checkpoint} is missing: it is the checkpoint of committed iteration ${state.iteration}, which the resumed run starts from; restore it, or start a new run`,
      );
    }

    // Every committed file passed: now drop what the interrupted iteration left behind.
    metrics.cutBack();
    buffer.cutBack();
    this.metricsDigest = metrics.digest;
    const keep = state.checkpoint ? path.basename(state.checkpoint) : undefined;
    for (const entry of readdirSync(path.join(this.dir, "checkpoints"))) {
      const n = Number(/^iteration-(\d+)/.exec(entry)?.[1]);
      if (entry !== keep && (!Number.isFinite(n) || n > state.iteration))
        rmSync(path.join(this.dir, "checkpoints", entry), { recursive: true, force: true });
    }
    for (const entry of readdirSync(path.join(this.dir, "eval"))) {
      const n = Number(/^iteration-(\d+)/.exec(entry)?.[1]);
      if (Number.isFinite(n) && n > state.iteration) rmSync(path.join(this.dir, "eval", entry), { force: true });
    }
    return { buffer: buffer.digest, checkpoint };
  }

  /** One append-only file against its commit: cut back when longer, refused when it lost committed bytes. */
  private verifyAppendOnly(
    file: string,
    commit: { bytes: number; sha256?: string },
    what: string,
    log: (line: string) => void,
  ): { digest: RunningDigest; cutBack: () => void } {
    const full = path.join(this.dir, file);
    const size = existsSync(full) ? statSync(full).size : undefined;
    const hint = "restore it from a copy, or start a new run; resuming would leave a hole in the run's record";
    if (size === undefined && commit.bytes > 0)
      throw new RunDirectoryError(
        `${full} is missing, but the run committed ${commit.bytes} bytes of it (${what}); ${hint}`,
      );
    if (size !== undefined && size < commit.bytes) {
      throw new RunDirectoryError(
        `${full} has ${size} bytes, fewer than the ${commit.bytes} the run committed (${what}): it was truncated or replaced; ${hint}`,
      );
    }
    // The committed prefix is checked before anything is cut, and cutting waits until every file
    // passed (recover), so that a refused resume leaves the directory as it found it.
    const digest = size === undefined ? new RunningDigest() : RunningDigest.ofPrefix(full, commit.bytes);
    if (commit.sha256 !== undefined && digest.commit.sha256 !== commit.sha256) {
      throw new RunDirectoryError(
        `${full}: its first ${commit.bytes} bytes (${what}) are not what the run committed (the checksum in state.json differs): the file was modified; ${hint}`,
      );
    }
    const excess = size !== undefined && size > commit.bytes ? size - commit.bytes : 0;
    return {
      digest,
      cutBack: () => {
        if (excess === 0) return;
        truncateSync(full, commit.bytes);
        log(
          `${file}: dropped ${excess} bytes after the last committed record (left by an interrupted iteration or a torn write)`,
        );
      },
    };
  }

  readMetrics(): Record<string, unknown>[] {
    if (!existsSync(this.metricsPath)) return [];
    return readFileSync(this.metricsPath, "utf8")
      .split("\n")
      .flatMap((l, i) => {
        if (l.trim() === "") return [];
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch (error) {
          throw new RunDirectoryError(
            `${this.metricsPath}:${i + 1}: not a JSON line (${(error as Error).message}); the file was damaged after it was written`,
          );
        }
      });
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
