// End to end with inference servers: a builtin:tiny run whose generations go to two launched
// servers (`arl serve --api vllm|sglang`, ARL's engine-mode gateway, under --engine-command),
// with weight sync after every update. The buffer's log-probs are those of the weights the
// servers were synced to (recomputed by a trainer that loads the synced folder), every
// generation went to the servers (the metrics' request counts are the episodes' turns), and a
// server killed mid-run is taken out while its requests are retried on the other (server 0: ties
// go to the lowest index, so the next rollout's first request finds it gone).
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { killGroup } from "../../src/contracts/process-group.js";
import { ragged, row } from "../../src/contracts/trainer-protocol.js";
import { envKinds } from "../../src/envs/registry.js";
import { arlVersion } from "../../src/plan/version.js";
import { readBuffer, Role } from "../../src/episode/buffer.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { configureTrainer, planVocabulary } from "../../src/runtime/run/provision.js";
import { TrainerClient } from "../../src/trainer/protocol/client.js";
import { compilePlans, counterSubprocessEnv, embeddedTrainer } from "../helpers/plans.js";

const arl = fileURLToPath(new URL("../../bin/arl.js", import.meta.url));

/** Three trainer processes (the run's and each server's) on 2 shared cores. */
const E2E_TIMEOUT_MS = 120_000;

const spec = (engine: string, iterations: number, servers: number, rollout = "") => `
experiment engine_run {
  seed: 5
  policy { model: "builtin:tiny", sampling { max_new_tokens: 12 } }
  ${counterSubprocessEnv(12)}
  harness { max_turns: 2 }
  reward { success: outcome.success }
  algorithm { group_size: 2 }
  rollout { tasks_per_batch: 2, concurrency: 4, iterations: ${iterations}${rollout} }
  eval { every: ${iterations}, tasks: 2, k: [1], before_training: false }
  resources { rollout { engine: ${engine}, servers: ${servers} } }
}
`;

interface EngineLine {
  iteration: number;
  policy_version: number;
  engine: { requests: number; retries: number; failed_servers: number; sync_s: number; version: number };
}

interface Manifest {
  run_options: { engine_command: string };
  engine: { engine: string; servers: { url: string; pid: number; log: string }[] };
}

async function engineRun(
  engine: "vllm" | "sglang",
  iterations: number,
  servers: number,
  o: { readonly killFirstAfter?: number; readonly rollout?: string } = {},
) {
  const { killFirstAfter } = o;
  const [plan] = compilePlans(spec(engine, iterations, servers, o.rollout));
  const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-engine-run-")), plan!);
  const logs: string[] = [];
  const engineCommand = `${process.execPath} ${arl} serve {plan} --api ${engine} --port {port} --seed {seed}`;
  const manifest = () => JSON.parse(readFileSync(runDir.manifestPath, "utf8")) as Manifest;
  let killed = false;
  const summary = await executePlan({
    plan: plan!,
    runDir,
    trainer: embeddedTrainer,
    envs: envKinds,
    engineCommand,
    log: (l) => logs.push(l),
    // Server 0 killed as iteration `killFirstAfter` is committed: the next rollout finds it gone.
    progress: (p) => {
      if (p.iteration !== killFirstAfter || killed) return;
      killed = true;
      killGroup(manifest().engine.servers[0]!.pid, "SIGKILL");
    },
  });
  return {
    plan: plan!,
    runDir,
    logs,
    summary,
    manifest: manifest(),
    lines: runDir.readMetrics() as unknown as EngineLine[],
  };
}

/** The buffer's log-probs of `iteration`'s generated tokens against those of the weights in `weights`, by a trainer that loads them. */
async function recomputed(
  runDir: RunDirectory,
  plan: ReturnType<typeof compilePlans>[number],
  iteration: number,
  weights: string,
) {
  const records = readBuffer(runDir.bufferPath).records.filter((r) => r.iteration === iteration);
  const trainer = await TrainerClient.start(embeddedTrainer, arlVersion());
  try {
    await configureTrainer(trainer, plan, planVocabulary(plan, envKinds, undefined), false);
    await trainer.request("load", { path: weights });
    const mask = records.map((r) => Uint8Array.from(r.roles, (role, k) => (k > 0 && role === Role.generated ? 1 : 0)));
    const s = plan.policy.sampling;
    const { logprobs } = await trainer.request("logprobs", {
      ids: ragged(
        records.map((r) => r.ids),
        Int32Array,
      ),
      policy: "current",
      sampling: { temperature: s.temperature, top_p: s.top_p, top_k: s.top_k },
      mask: ragged(mask, Uint8Array),
    });
    return records.map((r, i) => {
      const m = mask[i]!;
      const own = row(logprobs, i);
      return {
        sampled: Array.from(r.logprobs).filter((_, k) => m[k] === 1),
        trainer: Array.from(own).filter((_, k) => m[k] === 1),
        versions: new Set(Array.from(r.versions).filter((_, k) => m[k] === 1)),
      };
    });
  } finally {
    await trainer.shutdown();
  }
}

describe("a run sampling through inference servers", () => {
  it(
    "vllm: generates on the servers, syncs them to every version, and retries elsewhere when one is killed",
    async () => {
      const { plan, runDir, logs, summary, manifest, lines } = await engineRun("vllm", 2, 2, { killFirstAfter: 1 });
      expect(summary.iterations).toBe(2);
      expect(logs.find((l) => l.startsWith("vllm: launched 2 inference servers"))).toMatch(
        /http:\/\/127\.0\.0\.1:\d+ \(pid \d+, GPUs 0, log server-0\.log\), http:\/\/127\.0\.0\.1:\d+ \(pid \d+, GPUs 1, log server-1\.log\)/,
      );
      expect(manifest.run_options.engine_command).toContain("serve {plan} --api vllm --port {port}");
      const records = readBuffer(runDir.bufferPath).records;
      const turns = (it: number) => records.filter((r) => r.iteration === it).reduce((s, r) => s + r.turns, 0);
      // Every generation of iteration 1 went to the servers (no evaluation in it); the servers
      // serve the version of each update when its line is written.
      expect(lines[0]!.engine).toMatchObject({
        requests: turns(1),
        retries: 0,
        failed_servers: 0,
        version: lines[0]!.policy_version,
      });
      expect(lines[1]!.engine.version).toBe(lines[1]!.policy_version);
      // Iteration 2 was sampled by the version iteration 1 synced; its log-probs are those weights' own.
      const synced = lines[0]!.engine.version;
      const tokens = await recomputed(runDir, plan, 2, path.join(runDir.dir, "engine-weights", `v${synced}`));
      for (const t of tokens) {
        expect([...t.versions]).toEqual([synced]);
        t.sampled.forEach((lp, k) => expect(lp).toBeCloseTo(t.trainer[k]!, 4));
      }
      expect(tokens.flatMap((t) => t.sampled).length).toBeGreaterThan(0);
      // Server 0, killed after iteration 1's commit: taken out, its requests retried on server 1.
      expect(lines[1]!.engine.failed_servers).toBe(1);
      expect(lines[1]!.engine.retries).toBeGreaterThan(0);
      expect(lines[1]!.engine.requests).toBeGreaterThanOrEqual(turns(2));
      expect(logs.join("\n")).toMatch(
        /inference server 0 \(http:\/\/127\.0\.0\.1:\d+\) taken out: POST \/v1\/completions: .*; then its health check failed: GET \/health: fetch failed \(ECONNREFUSED\)/,
      );
      // The two newest versions' weights stay; the servers' logs are in the run directory.
      expect(readdirSync(path.join(runDir.dir, "engine-weights")).sort()).toEqual(
        [`v${synced}`, `v${lines[1]!.policy_version}`].sort(),
      );
      // Each holds the policy's weights alone (save's policy_only): no optimizer, critic or
      // reference file for an engine to read as the model's.
      expect(readdirSync(path.join(runDir.dir, "engine-weights", `v${synced}`)).sort()).toEqual([
        "model.safetensors",
        "trainer.json",
      ]);
      expect(readFileSync(path.join(runDir.dir, manifest.engine.servers[1]!.log), "utf8")).toContain(
        "arl serve: listening on",
      );
    },
    E2E_TIMEOUT_MS,
  );

  it(
    "sglang, asynchronous rollout: the servers keep serving version t while update t runs, and the lag bound holds",
    async () => {
      const { runDir, summary, lines } = await engineRun("sglang", 2, 1, { rollout: ", async { max_policy_lag: 1 }" });
      expect(summary.iterations).toBe(2);
      const [first, second] = lines as unknown as (EngineLine & { policy_lag: number; lag_drops: number })[];
      // Iteration 2's batch was sampled during update 1, by the version before it, which the
      // servers still served when line 1 was written.
      expect(first!.policy_version).toBe(1);
      expect(first!.engine).toMatchObject({ retries: 0, failed_servers: 0, version: 0 });
      const sampledBy = new Set(
        readBuffer(runDir.bufferPath)
          .records.filter((r) => r.iteration === 2)
          .flatMap((r) => Array.from(r.versions).filter((v) => v >= 0)),
      );
      expect([...sampledBy]).toEqual([0]);
      expect([second!.policy_lag, second!.lag_drops]).toEqual([1, 0]);
      // The final evaluation is of the last update's weights: the servers took them first.
      expect(second!.engine.version).toBe(second!.policy_version);
      expect(second!.engine.requests).toBeGreaterThan(0);
    },
    E2E_TIMEOUT_MS,
  );
});
