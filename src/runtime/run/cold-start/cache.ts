// Cold-started checkpoints shared between runs, as generated env games are: the variants of one
// seed of a sweep train the same cold start (same demos, steps and configuration), so the first
// to train it stores checkpoint 0 here and the others load it (phase.ts). An entry is a folder
// <cache>/<key>/ (cache-key.ts) holding checkpoint/ (the trainer's files, byte for byte) and
// cold-start.json (what the cold start trained on and its losses, the sha256 of every file,
// and a digest of itself). It is written in a scratch folder beside it and renamed in whole, so
// an entry is either absent or complete; one whose bytes no longer match its digests (a torn
// copy, a disk fault, an edit) is reported, trained afresh and replaced, never loaded.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import * as z from "zod";
import { writeFileSynced } from "../../../contracts/synced-file.js";
import { canonicalize } from "../../../plan/canonical.js";
import { sha256Hex as sha256 } from "../../../plan/hash.js";
import { sftSummarySchema, type SftSummary } from "../../cold-start-state.js";

const ENTRY_FORMAT = "arl-cold-start-cache/1";
const RECORD = "cold-start.json";
const CHECKPOINT = "checkpoint";

const recordSchema = z.strictObject({
  format: z.literal(ENTRY_FORMAT),
  key: z.string(),
  /** What the cold start trained on and its losses per epoch (state.json's `sft`). */
  summary: sftSummarySchema,
  /** The cold start's wall time in the run that trained it. */
  trained_s: z.number(),
  /** The run directory that trained it, and when it was stored. */
  run: z.string(),
  stored: z.string(),
  /** The checkpoint's files (relative to checkpoint/): bytes and sha256. */
  files: z.record(z.string(), z.strictObject({ bytes: z.number(), sha256: z.string() })),
  /** sha256 of the canonical JSON of the record without this field. */
  digest: z.string(),
});
type EntryRecord = z.infer<typeof recordSchema>;

/** A verified entry: its record and its checkpoint's bytes, read once (what was checked is what is copied). */
export interface CachedColdStart {
  readonly dir: string;
  readonly summary: SftSummary;
  readonly trainedSeconds: number;
  readonly run: string;
  readonly files: ReadonlyMap<string, Buffer>;
}

export type CacheLookup =
  | { readonly found: CachedColdStart }
  | { readonly missing: true }
  /** An entry is there but cannot be trusted: why. */
  | { readonly damaged: string };

const entryDir = (cacheDir: string, key: string): string => path.join(cacheDir, key);

/** The entry of `key`, verified against its digests; never throws. */
export function lookupColdStart(cacheDir: string, key: string): CacheLookup {
  const dir = entryDir(cacheDir, key);
  if (!existsSync(dir)) return { missing: true };
  try {
    const parsed = recordSchema.safeParse(JSON.parse(readFileSync(path.join(dir, RECORD), "utf8")));
    if (!parsed.success) return { damaged: `${RECORD} is not an entry record of this arl` };
    const { digest, ...rest } = parsed.data;
    if (sha256(canonicalize(rest)) !== digest) return { damaged: `${RECORD} does not match its digest` };
    if (rest.key !== key) return { damaged: `${RECORD} names key ${rest.key}` };
    const files = new Map<string, Buffer>();
    for (const [name, commit] of Object.entries(rest.files)) {
      if (name !== path.basename(name)) return { damaged: `${RECORD} names a file outside the checkpoint (${name})` };
      const file = path.join(dir, CHECKPOINT, name);
      if (!existsSync(file)) return { damaged: `${CHECKPOINT}/${name} is missing` };
      const bytes = readFileSync(file);
      if (bytes.length !== commit.bytes || sha256(bytes) !== commit.sha256)
        return {
          damaged: `${CHECKPOINT}/${name} is not the file stored (${bytes.length} bytes, ${commit.bytes} stored, or other bytes)`,
        };
      files.set(name, bytes);
    }
    if (files.size === 0) return { damaged: "the entry holds no checkpoint file" };
    return { found: { dir, summary: rest.summary, trainedSeconds: rest.trained_s, run: rest.run, files } };
  } catch (error) {
    return { damaged: `cannot read it (${(error as Error).message})` };
  }
}

/** A scratch folder beside `target`, unique to this process and call. */
const scratchFor = (target: string) =>
  path.join(path.dirname(target), `.${path.basename(target)}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);

/** Puts folder `scratch` at `target`; whatever was at `target` (a damaged entry, an old checkpoint) is replaced. */
function renameInPlace(scratch: string, target: string): void {
  if (existsSync(target)) {
    const old = scratchFor(target).replace(".tmp-", ".old-");
    renameSync(target, old);
    renameSync(scratch, target);
    rmSync(old, { recursive: true, force: true });
  } else renameSync(scratch, target);
}

/** Writes the verified checkpoint `cached` as folder `target` (the run's checkpoint 0), whole or not at all. */
export function restoreCheckpoint(cached: CachedColdStart, target: string): void {
  const scratch = scratchFor(target);
  mkdirSync(scratch, { recursive: true });
  try {
    for (const [name, bytes] of cached.files) writeFileSynced(path.join(scratch, name), bytes);
    renameInPlace(scratch, target);
  } catch (error) {
    rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
}

/** What an entry records besides its checkpoint. */
export interface StoredColdStart {
  readonly summary: SftSummary;
  readonly trainedSeconds: number;
  readonly run: string;
}

/**
 * Stores the run's checkpoint folder `checkpoint` (its regular files) as the entry of `key`,
 * through a scratch folder renamed in. An entry that another run stored meanwhile and that
 * verifies is kept (the same key holds the same bytes); a damaged one is replaced. Returns
 * the entry's folder; throws when it cannot be written (the caller warns and goes on).
 */
export function storeColdStart(cacheDir: string, key: string, checkpoint: string, stored: StoredColdStart): string {
  const target = entryDir(cacheDir, key);
  mkdirSync(cacheDir, { recursive: true });
  const scratch = scratchFor(target);
  try {
    mkdirSync(path.join(scratch, CHECKPOINT), { recursive: true });
    const files: EntryRecord["files"] = {};
    for (const name of readdirSync(checkpoint).sort()) {
      const file = path.join(checkpoint, name);
      if (!statSync(file).isFile())
        throw new Error(`${file} is not a regular file: only flat checkpoint folders are cached`);
      const bytes = readFileSync(file);
      writeFileSynced(path.join(scratch, CHECKPOINT, name), bytes);
      files[name] = { bytes: bytes.length, sha256: sha256(bytes) };
    }
    const record: Omit<EntryRecord, "digest"> = {
      format: ENTRY_FORMAT,
      key,
      summary: stored.summary,
      trained_s: stored.trainedSeconds,
      run: stored.run,
      stored: new Date().toISOString(),
      files,
    };
    writeFileSynced(
      path.join(scratch, RECORD),
      `${JSON.stringify({ ...record, digest: sha256(canonicalize(record)) }, null, 2)}\n`,
    );
    const there = lookupColdStart(cacheDir, key);
    if ("damaged" in there) renameInPlace(scratch, target);
    else if ("missing" in there) {
      try {
        renameSync(scratch, target);
      } catch (error) {
        // Another process renamed its copy in first: the same key holds the same bytes.
        const code = (error as NodeJS.ErrnoException).code;
        if ((code !== "ENOTEMPTY" && code !== "EEXIST") || !("found" in lookupColdStart(cacheDir, key))) throw error;
      }
    }
    rmSync(scratch, { recursive: true, force: true });
    return target;
  } catch (error) {
    rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
}

/** The cold starts a run of this process is looking up or training now, by key: a run that needs the same one waits for it rather than training it twice (arl run --jobs). */
const claimed = new Map<string, Promise<void>>();

/**
 * Waits while another run of this process holds the cold start of `key`, then holds it (the
 * check and the claim in one synchronous step): whether it waited, and the release to call once
 * this run has loaded it, or trained and stored it, or failed. `onWait` is called once, when it
 * starts waiting, so that a run idle for the minutes a cold start takes says why.
 */
export async function claimColdStart(
  key: string,
  onWait?: () => void,
): Promise<{ readonly waited: boolean; readonly release: () => void }> {
  let waited = false;
  for (let held = claimed.get(key); held !== undefined; held = claimed.get(key)) {
    if (!waited) onWait?.();
    waited = true;
    await held;
  }
  let release: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (release = resolve));
  claimed.set(key, done);
  return {
    waited,
    release: () => {
      if (claimed.get(key) === done) claimed.delete(key);
      release();
    },
  };
}
