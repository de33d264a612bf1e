// The cache of cold starts (src/runtime/run/cold-start/cache.ts) with the embedded trainer: run A
// trains a cold start and stores its checkpoint 0; run B, a variant that differs only in RL's
// learning rate (the cold start sends its own rate, rollout.sft.lr), loads it instead of training
// and then computes exactly what run C, the same plan with the cache off, computes after training
// it (checkpoint bytes, metrics, evaluations, token buffer). An entry whose bytes no longer match
// its digests is trained afresh with a warning and replaced; one another run of the same process
// is training is waited for; a trainer that does not announce deterministic training is never cached.
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { envKinds } from "../../src/envs/registry.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { claimColdStart, lookupColdStart } from "../../src/runtime/run/cold-start/cache.js";
import type { Plan } from "../../src/plan/schema.js";
import { compilePlans, embeddedTrainer, scriptedTrainerScript } from "../helpers/plans.js";
import { runArl } from "../helpers/cli.js";

const spec = `
import "std/envs/rooms" as rooms

experiment cached_cold_start {
  seed: 3
  policy { model: "builtin:tiny", sampling { max_new_tokens: 8 } }
  env quest extends rooms.world { tasks: 20 }
  harness { tools: quest.tools, format: text_action, max_turns: 3 }
  reward { success: outcome.success }
  algorithm { group_size: 2, advantage { baseline: leave_one_out }, optimizer { lr: 1e-3, warmup_steps: 2 } }
  rollout { tasks_per_batch: 2, iterations: 1, sft { demos: 6, epochs: 2, batch: 3, lr: 1e-2 } }
  eval { every: 1, tasks: 2, samples_per_task: 1, k: [1], before_training: true }
  sweep { algorithm.optimizer.lr: [1e-3, 3e-3] }
}
`;

/** Runs `plan` in a new directory with the cache at `cache` (undefined: off); its directory and log. */
async function run(
  plan: Plan,
  cache: string | undefined,
  onLog?: (line: string) => void,
): Promise<{ dir: RunDirectory; logs: string[] }> {
  const dir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-cache-run-")), plan);
  const logs: string[] = [];
  await executePlan({
    plan,
    runDir: dir,
    trainer: embeddedTrainer,
    envs: envKinds,
    log: (l) => {
      logs.push(l);
      onLog?.(l);
    },
    ...(cache !== undefined ? { coldStartCache: cache } : {}),
  });
  return { dir, logs };
}

const withoutTimes = (lines: Record<string, unknown>[]) => lines.map(({ time: _time, ...rest }) => rest);
const file = (dir: RunDirectory, ...parts: string[]) => readFileSync(path.join(dir.dir, ...parts));

/** What a run computed after its cold start: its evaluation, metrics (timings aside), tokens and final checkpoint. */
function expectSameRun(a: RunDirectory, b: RunDirectory): void {
  for (const name of ["model.safetensors", "optimizer.safetensors", "trainer.json"])
    expect(
      file(a, "checkpoints", "iteration-00001", name).equals(file(b, "checkpoints", "iteration-00001", name)),
      name,
    ).toBe(true);
  expect(withoutTimes(a.readMetrics())).toEqual(withoutTimes(b.readMetrics()));
  for (const evaluation of [0, 1])
    expect(readFileSync(a.evalPath(evaluation), "utf8")).toBe(readFileSync(b.evalPath(evaluation), "utf8"));
  expect(file(a, "buffer.arlbuf").equals(file(b, "buffer.arlbuf"))).toBe(true);
  expect(a.readState().sft).toEqual(b.readState().sft);
}

describe("the cache of cold starts", () => {
  it("stores a trained cold start; a variant differing in RL's rate loads it and computes what training it afresh gives", async () => {
    const [planA, planB] = compilePlans(spec);
    const cache = mkdtempSync(path.join(tmpdir(), "arl-sft-cache-"));

    const a = await run(planA!, cache);
    const stateA = a.dir.readState();
    expect(stateA.coldStartCache).toMatchObject({ loaded: false, entry: path.join(cache, stateA.coldStartCache!.key) });
    const key = stateA.coldStartCache!.key;
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(a.logs).toContain(`sft: stored the cold start in the cache, key ${key} (in ${cache})`);
    expect(a.logs.filter((l) => l.startsWith("sft epoch"))).toHaveLength(2);

    const b = await run(planB!, cache);
    expect(
      b.logs.some((l) => l.startsWith(`sft: loaded the cold start from the cache, key ${key} (in ${cache};`)),
    ).toBe(true);
    // Loaded, not trained: the epochs' losses come from the entry, printed as a trained cold start prints them.
    expect(b.logs.filter((l) => l.startsWith("sft epoch"))).toEqual(a.logs.filter((l) => l.startsWith("sft epoch")));
    expect(b.logs).toContain("sft: trained on 6 walkthroughs");
    const stateB = b.dir.readState();
    expect(stateB.coldStartCache).toMatchObject({
      key,
      loaded: true,
      entry: path.join(cache, key),
      trained_by: a.dir.dir,
    });
    expect(stateB.sft).toEqual(stateA.sft);
    expect((b.dir.readMetrics()[0]!.sft as { epochs: unknown[] }).epochs).toHaveLength(2);

    // The same plan as B with the cache off trains the cold start itself, to the same bytes and results.
    const c = await run(planB!, undefined);
    expect(c.logs.some((l) => l.includes("the cache"))).toBe(false);
    expect(c.dir.readState().coldStartCache).toBeUndefined();
    expectSameRun(b.dir, c.dir);
    // A's RL differs (its rate), its cold start does not.
    expect(
      file(a.dir, "checkpoints", "iteration-00001", "model.safetensors").equals(
        file(c.dir, "checkpoints", "iteration-00001", "model.safetensors"),
      ),
    ).toBe(false);

    // Tampered: one byte of the cached weights changed. B trains it afresh, warns, and replaces it.
    const weights = path.join(cache, key, "checkpoint", "model.safetensors");
    const bytes = readFileSync(weights);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 1, bytes.length - 1);
    writeFileSync(weights, bytes);
    expect(lookupColdStart(cache, key)).toEqual({
      damaged: `checkpoint/model.safetensors is not the file stored (${bytes.length} bytes, ${bytes.length} stored, or other bytes)`,
    });
    const retrained = await run(planB!, cache);
    expect(retrained.logs).toContain(
      `sft: warning: the cached cold start ${key} in ${cache} is damaged (checkpoint/model.safetensors is not the file stored (${bytes.length} bytes, ${bytes.length} stored, or other bytes)); training it afresh, and it will be replaced`,
    );
    expect(retrained.logs.filter((l) => l.startsWith("sft epoch"))).toHaveLength(2);
    expect(retrained.dir.readState().coldStartCache).toMatchObject({
      key,
      loaded: false,
      entry: path.join(cache, key),
    });
    expectSameRun(retrained.dir, c.dir);
    expect("found" in lookupColdStart(cache, key)).toBe(true);
    // Only the entry is left: no scratch folder of the writes.
    expect(readdirSync(cache)).toEqual([key]);

    // A record cut short (a copy that stopped half-way) is damaged too, never trusted.
    const record = path.join(cache, key, "cold-start.json");
    writeFileSync(record, readFileSync(record, "utf8").slice(0, 100));
    expect(lookupColdStart(cache, key)).toMatchObject({
      damaged: expect.stringContaining("cannot read it") as unknown,
    });
  }, 180_000);

  it("lets a run of the same process wait for the cold start another one is training, then load it (arl run --jobs)", async () => {
    const [planA, planB] = compilePlans(spec);
    const key = (await run(planA!, mkdtempSync(path.join(tmpdir(), "arl-sft-cache-")))).dir.readState().coldStartCache!
      .key;
    // The test holds the claim until both runs wait on it, so that which run trains and which waits
    // is decided by the claim and not by how fast each reaches it.
    const held = await claimColdStart(key);
    const cache = mkdtempSync(path.join(tmpdir(), "arl-sft-cache-"));
    let waiting = 0;
    let bothWaiting: () => void = () => undefined;
    const bothWait = new Promise<void>((resolve) => (bothWaiting = resolve));
    const onLog = (line: string) => {
      if (line.startsWith("sft: waiting for another run of this process") && ++waiting === 2) bothWaiting();
    };
    const runs = Promise.all([run(planA!, cache, onLog), run(planB!, cache, onLog)]);
    await bothWait;
    held.release();
    const [a, b] = await runs;
    const logs = [...a.logs, ...b.logs];
    expect(logs).toContain(`sft: waiting for another run of this process to train the same cold start (key ${key})`);
    // After the release one run trains and stores it while the other waits again, then loads it.
    expect(logs.filter((l) => l.startsWith("sft: stored the cold start"))).toHaveLength(1);
    expect(logs.filter((l) => l.startsWith("sft: loaded the cold start"))).toHaveLength(1);
    expect(
      logs.filter((l) => l === "sft: waited for another run of this process to train the same cold start"),
    ).toHaveLength(2);
    expect(a.dir.readState().sft).toEqual(b.dir.readState().sft);
  }, 180_000);

  it("keys on what decides the cold start: another seed trains and stores its own", async () => {
    const [plan] = compilePlans(spec.replace("seed: 3", "seed: 4"));
    const [other] = compilePlans(spec);
    const cache = mkdtempSync(path.join(tmpdir(), "arl-sft-cache-"));
    const first = await run(other!, cache);
    const second = await run(plan!, cache);
    expect(second.dir.readState().coldStartCache).toMatchObject({ loaded: false });
    expect(second.dir.readState().coldStartCache!.key).not.toBe(first.dir.readState().coldStartCache!.key);
    expect(readdirSync(cache)).toHaveLength(2);
  }, 180_000);

  it("is on in arl run, in ARL_COLD_START_CACHE's folder (relative to the working folder), recorded in the manifest; ARL_COLD_START_CACHE=off trains every cold start", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-sft-cache-cli-"));
    writeFileSync(path.join(dir, "spec.arl"), spec);
    const manifests = (out: string) =>
      ["lr=0.001", "lr=0.003"].map((variant) => {
        const variantDir = path.join(dir, out, "cached_cold_start", variant);
        const [runDir] = readdirSync(variantDir);
        return JSON.parse(readFileSync(path.join(variantDir, runDir!, "manifest.json"), "utf8")) as {
          run_options: { cold_start_cache: string | null };
        };
      });
    const embedded = ["--trainer-command", [embeddedTrainer.file, ...embeddedTrainer.args].join(" ")];
    const on = await runArl(["run", "spec.arl", "--out", "on", ...embedded], {
      cwd: dir,
      env: { ARL_COLD_START_CACHE: "cache" },
    });
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toMatch(/sft: stored the cold start in the cache, key [0-9a-f]{64} \(in .*cache\)/);
    expect(on.stdout).toMatch(/sft: loaded the cold start from the cache, key [0-9a-f]{64} \(in .*cache;/);
    expect(manifests("on").map((m) => m.run_options.cold_start_cache)).toEqual([
      path.join(dir, "cache"),
      path.join(dir, "cache"),
    ]);
    const off = await runArl(["run", "spec.arl", "--out", "off", ...embedded], {
      cwd: dir,
      env: { ARL_COLD_START_CACHE: "off" },
    });
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).not.toContain("from the cache");
    expect(off.stdout).not.toContain("in the cache");
    expect(off.stdout.match(/^sft epoch 1\/2/gm)).toHaveLength(2);
    expect(manifests("off").map((m) => m.run_options.cold_start_cache)).toEqual([null, null]);
  }, 180_000);

  it("is not used with a trainer that does not announce deterministic training, and says so", async () => {
    // The double takes no per-step rate either: its cold start trains at the configured one.
    const [plan] = compilePlans(spec.replace(", lr: 1e-2 }", " }"));
    const cache = mkdtempSync(path.join(tmpdir(), "arl-sft-cache-"));
    const dir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-cache-run-")), plan!);
    const logs: string[] = [];
    await executePlan({
      plan: plan!,
      runDir: dir,
      trainer: { file: process.execPath, args: [scriptedTrainerScript] },
      envs: envKinds,
      log: (l) => logs.push(l),
      coldStartCache: cache,
    });
    expect(logs.find((l) => l.startsWith("sft: not cached:"))).toMatch(
      /does not announce deterministic training \(capabilities\.deterministic\)/,
    );
    expect(readdirSync(cache)).toEqual([]);
    expect(dir.readState().coldStartCache).toBeUndefined();
  }, 120_000);
});
