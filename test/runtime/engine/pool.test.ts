// The pool of inference servers against real HTTP servers in this process (node:http): which
// server takes a request, retries elsewhere on failure, dead servers, counts; and the weight sync
// that gives each server its version. The wire is a small test format of our own (the engines'
// wire formats have their tests in wire.test.ts): POST /gen {prompt, seed} answers {ids, lps, v}.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EnvError } from "../../../src/contracts/env.js";
import {
  EngineProtocolError,
  type EngineGenerateArgs,
  type EngineWire,
} from "../../../src/inference/engine/contract.js";
import { EnginePool, type GenerateRequest } from "../../../src/inference/engine/pool.js";
import { WeightSync, WeightSyncError } from "../../../src/inference/engine/weight-sync.js";
import type { RunEngine } from "../../../src/inference/engine/run-engine.js";
import { RunError } from "../../../src/runtime/run/context.js";
import { requireServing, syncEngine } from "../../../src/runtime/run/engines.js";

const testWire: EngineWire = {
  engine: "vllm",
  generate: (a: EngineGenerateArgs) => ({
    method: "POST",
    path: "/gen",
    body: { model: a.model, prompt: Array.from(a.prompt), seed: a.seed, max: a.maxNewTokens },
  }),
  parseGeneration(body) {
    const b = body as { ids?: unknown; lps?: unknown; v?: unknown };
    if (!Array.isArray(b.ids) || !Array.isArray(b.lps))
      throw new EngineProtocolError(`ids: expected a list, got ${JSON.stringify(body).slice(0, 40)}`);
    return {
      ids: Int32Array.from(b.ids as number[]),
      logprobs: Float32Array.from(b.lps as number[]),
      finish: "stop",
      weightVersion: typeof b.v === "string" ? b.v : null,
    };
  },
  health: () => ({ method: "GET", path: "/health" }),
  weightSync: (dir, version) => [{ method: "POST", path: "/load", body: { dir, version: String(version) } }],
  unloadAdapter: (version) => ({ method: "POST", path: "/unload", body: { version: String(version) } }),
  // Under LoRA a generation names its version's adapter, and the test server answers with that version.
  servedModel: (base, version, { lora }) => (lora ? `adapter-${version}` : base),
  launchCommand: () => ({ command: "true", args: [], env: {} }),
};

/** One test server: what it does with a generation is the test's; it answers health and loads unless told to fail. */
interface TestServer {
  url: string;
  /** Generations it received, in order. */
  seen: number[];
  version: string | null;
  behaviour: "ok" | "500" | "garbage" | "hang" | "400" | "stale" | "unversioned";
  /** The versions it holds loaded (LoRA adapters are loaded one per version and unloaded by name). */
  loaded: Set<string>;
  healthy: boolean;
  loadFails: boolean;
  /** Answers held back until released (to keep requests outstanding). */
  held: (() => void)[];
  hold: boolean;
  server: Server;
}

const open: Server[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => new Promise((r) => s.close(r)).catch(() => undefined)));
});

function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString()));
    req.on("end", () => resolve(text ? (JSON.parse(text) as Record<string, unknown>) : {}));
  });
}

async function testServer(index: number): Promise<TestServer> {
  const t = {
    seen: [],
    version: null,
    behaviour: "ok",
    loaded: new Set(),
    healthy: true,
    loadFails: false,
    held: [],
    hold: false,
  } as unknown as TestServer;
  const reply = (res: ServerResponse, status: number, payload: string) =>
    res.writeHead(status, { "content-type": "application/json" }).end(payload);
  t.server = createServer((req, res) => {
    void body(req).then((b) => {
      if (req.url === "/health") return reply(res, t.healthy ? 200 : 503, "{}");
      if (req.url === "/load") {
        if (t.loadFails) return reply(res, 500, '{"error":"cannot read the weights"}');
        t.version = b.version as string;
        t.loaded.add(t.version);
        return reply(res, 200, "{}");
      }
      if (req.url === "/unload") {
        t.loaded.delete(b.version as string);
        return reply(res, 200, "{}");
      }
      const seed = b.seed as number;
      t.seen.push(seed);
      const answer = () => {
        if (t.behaviour === "500") return reply(res, 500, '{"error":"engine died"}');
        if (t.behaviour === "400") return reply(res, 400, '{"error":"prompt too long"}');
        if (t.behaviour === "garbage") return reply(res, 200, "<html>oops</html>");
        if (t.behaviour === "hang") return;
        const adapter =
          typeof b.model === "string" && b.model.startsWith("adapter-") ? b.model.slice("adapter-".length) : null;
        const v = t.behaviour === "stale" ? "0" : t.behaviour === "unversioned" ? null : (adapter ?? t.version);
        reply(res, 200, JSON.stringify({ ids: [index, seed], lps: [-0.5, -0.25], v }));
      };
      if (t.hold) t.held.push(answer);
      else answer();
    });
  });
  open.push(t.server);
  await new Promise<void>((r) => t.server.listen(0, "127.0.0.1", r));
  const address = t.server.address();
  t.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/`;
  return t;
}

const request = (seed: number): GenerateRequest => ({
  prompt: Int32Array.of(1, 2),
  maxNewTokens: 4,
  temperature: 1,
  topP: 1,
  topK: 0,
  stopIds: [9],
  seed,
});

/** A pool over `n` test servers, every server synced to version 3. */
async function poolOf(n: number, options: { maxRetries?: number; timeoutS?: number } = {}) {
  const servers = await Promise.all(Array.from({ length: n }, (_, i) => testServer(i)));
  const log: string[] = [];
  const pool = new EnginePool(
    testWire,
    servers.map((s) => s.url),
    {
      requestTimeoutS: options.timeoutS ?? 5,
      maxRetries: options.maxRetries ?? 2,
      model: "m",
      lora: false,
      log: (l) => log.push(l),
    },
  );
  const dir = mkdtempSync(path.join(tmpdir(), "arl-pool-"));
  const saves: string[] = [];
  // The trainer's save: the folder it names, at the version it is named after.
  const trainer = {
    request: async (_method: "save", params: { path: string }) => (
      saves.push(params.path),
      mkdirSync(params.path, { recursive: true }),
      { files: [], policy_version: Number(path.basename(params.path).slice(1)) }
    ),
  };
  const sync = new WeightSync(trainer as never, pool, dir, false, null);
  await sync.sync(3);
  return { servers, pool, log, sync, dir, saves };
}

describe("the pool of inference servers", () => {
  it("says once in the run log when a server's answers name no weight version (vLLM before 0.33.0)", async () => {
    const { servers, pool, log } = await poolOf(1);
    servers[0]!.behaviour = "unversioned";
    for (const seed of [1, 2, 3]) expect((await pool.generate(request(seed))).version).toBe(3);
    expect(log.filter((l) => l.includes("does not say which weights served its generations"))).toHaveLength(1);
    expect(log.join("\n")).toMatch(/recorded with the version ARL synced it to \(3\), unconfirmed by the engine/);
  });

  it("sends each request to the server with the fewest outstanding, the lowest index on ties", async () => {
    const { servers, pool } = await poolOf(3);
    for (const s of servers) s.hold = true;
    const pending = [0, 1, 2, 3].map((seed) => pool.generate(request(seed)));
    await new Promise((r) => setTimeout(r, 100));
    // 0, 1, 2 one each (ties go low), then 3 to server 0 again (all at one outstanding).
    expect(servers.map((s) => s.seen)).toEqual([[0, 3], [1], [2]]);
    // Server 1 answers: the next request goes to it (server 0 has two outstanding, 2 has one, 1 none).
    servers[1]!.held.splice(0).forEach((f) => f());
    await pending[1];
    const fifth = pool.generate(request(4));
    await new Promise((r) => setTimeout(r, 100));
    expect(servers[1]!.seen).toEqual([1, 4]);
    for (const s of servers) {
      s.hold = false;
      s.held.splice(0).forEach((f) => f());
    }
    const answered = await Promise.all(pending);
    await fifth;
    // The engine's ids and log-probs as they came, with the version the server was synced to.
    expect(answered.map((g) => [g.server, Array.from(g.ids), Array.from(g.logprobs), g.version])).toEqual([
      [0, [0, 0], [-0.5, -0.25], 3],
      [1, [1, 1], [-0.5, -0.25], 3],
      [2, [2, 2], [-0.5, -0.25], 3],
      [0, [0, 3], [-0.5, -0.25], 3],
    ]);
    expect(pool.counts).toEqual({ requests: 5, retries: 0, failedServers: 0 });
  });

  it("retries a failed request on another server; a server that then fails its health check is dead, and counted", async () => {
    const { servers, pool, log } = await poolOf(2);
    servers[0]!.behaviour = "500";
    servers[0]!.healthy = false;
    const g = await pool.generate(request(7));
    expect(g.server).toBe(1);
    expect(servers.map((s) => s.seen)).toEqual([[7], [7]]);
    await pool.settle();
    expect(pool.servers.map((s) => s.state)).toEqual(["dead", "live"]);
    expect(pool.counts).toEqual({ requests: 1, retries: 1, failedServers: 1 });
    expect(log.join("\n")).toMatch(
      /server 0 .* taken out: POST \/gen answered 500.*then its health check failed: GET \/health answered 503/,
    );
    // A dead server takes nothing more.
    await pool.generate(request(8));
    expect(servers[0]!.seen).toEqual([7]);
  });

  it("a suspect server that passes its health check rejoins", async () => {
    const { servers, pool } = await poolOf(2);
    servers[0]!.behaviour = "garbage";
    const g = await pool.generate(request(1));
    expect(g.server).toBe(1);
    await pool.settle();
    expect(pool.servers.map((s) => s.state)).toEqual(["live", "live"]);
    servers[0]!.behaviour = "ok";
    expect((await pool.generate(request(2))).server).toBe(0);
    expect(pool.counts).toEqual({ requests: 2, retries: 1, failedServers: 0 });
  });

  it("a connection refused, a timeout and weights of another version are failures too", async () => {
    const { servers, pool } = await poolOf(3, { timeoutS: 0.3 });
    await new Promise((r) => servers[0]!.server.close(r)); // refused
    servers[1]!.behaviour = "stale";
    servers[2]!.behaviour = "hang";
    const error = await pool.generate(request(5)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EnvError);
    const message = (error as Error).message;
    expect(message).toContain("the generation failed 3 times (resources.rollout.max_retries 2)");
    expect(message).toMatch(/server 0 .*ECONNREFUSED/);
    expect(message).toMatch(/server 1 .*served weight version '0' after being synced to version 3/);
    expect(message).toMatch(/server 2 .*no answer within 0.3 s/);
  });

  it("a request the server refuses (4xx) is the episode's env error at once, and the server stays", async () => {
    const { servers, pool } = await poolOf(2);
    servers[0]!.behaviour = "400";
    const error = await pool.generate(request(1)).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /server 0 .* refused the generation: POST \/gen answered 400: \{"error":"prompt too long"\}/,
    );
    expect(servers[1]!.seen).toEqual([]);
    expect(pool.live()).toHaveLength(2);
  });

  it("with every server dead, a generation is an env error naming them and their last errors", async () => {
    const { servers, pool } = await poolOf(2, { maxRetries: 5 });
    for (const s of servers) {
      s.behaviour = "500";
      s.healthy = false;
    }
    const error = await pool.generate(request(1)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EnvError);
    expect((error as Error).message).toMatch(
      /^no inference server is left: server 0 \(.*\): POST \/gen answered 500.*; server 1 \(.*\): POST \/gen answered 500/,
    );
    expect(pool.counts.failedServers).toBe(2);
    // The phase that played such episodes then stops the run, resumably.
    const stopped = (() => {
      try {
        requireServing({ engine: { pool } as unknown as RunEngine });
      } catch (e) {
        return e;
      }
    })();
    expect(stopped).toBeInstanceOf(RunError);
    expect((stopped as RunError).resumable).toBe(true);
    expect((stopped as RunError).message).toMatch(
      /^every inference server is out: server 0 .*; resume once they are back/,
    );
  });

  it("weight sync: every live server loads the saved version; one that fails is dead; older folders go", async () => {
    const { servers, pool, sync, dir, saves } = await poolOf(2);
    expect(servers.map((s) => s.version)).toEqual(["3", "3"]);
    await sync.sync(4);
    await sync.sync(4); // already served: nothing saved or sent
    servers[1]!.loadFails = true;
    await sync.sync(5);
    expect(saves.map((p) => path.basename(p))).toEqual(["v3", "v4", "v5"]);
    expect(servers.map((s) => s.version)).toEqual(["5", "4"]);
    expect(pool.servers.map((s) => [s.state, s.version])).toEqual([
      ["live", 5],
      ["dead", 4],
    ]);
    expect(pool.servers[1]!.lastError).toMatch(/the weight sync to version 5 failed: POST \/load answered 500/);
    expect(sync.version).toBe(5);
    expect(sync.takeSeconds()).toBeGreaterThan(0);
    // The served version's folder and the one before it stay.
    expect(readdirSync(path.join(dir, "engine-weights")).sort()).toEqual(["v4", "v5"]);
    servers[0]!.loadFails = true;
    await expect(sync.sync(6)).rejects.toThrow(WeightSyncError);
    // No server took version 6: its folder goes, and so does v4, which nothing is in flight on.
    expect(readdirSync(path.join(dir, "engine-weights")).sort()).toEqual(["v5"]);
  });

  it("under LoRA, unloads every adapter no generation needs: the served one stays, and one a generation in flight names until it is answered", async () => {
    const server = await testServer(0);
    const pool = new EnginePool(testWire, [server.url], { requestTimeoutS: 5, maxRetries: 2, model: "m", lora: true });
    const dir = mkdtempSync(path.join(tmpdir(), "arl-lora-"));
    const trainer = {
      request: async (_method: "save", params: { path: string }) => (
        mkdirSync(params.path, { recursive: true }),
        { files: [], policy_version: Number(path.basename(params.path).slice(1)) }
      ),
    };
    const sync = new WeightSync(trainer as never, pool, dir, true, null);
    await sync.sync(1);
    await sync.sync(2);
    expect([...server.loaded]).toEqual(["2"]);
    // A generation in flight on version 2 (asynchronous rollout) while version 3 is loaded.
    server.hold = true;
    const inFlight = pool.generate(request(7));
    await new Promise((r) => setTimeout(r, 100));
    await sync.sync(3);
    expect([...server.loaded].sort()).toEqual(["2", "3"]);
    server.held.splice(0).forEach((f) => f());
    expect((await inFlight).version).toBe(2);
    for (let i = 0; i < 50 && server.loaded.size > 1; i++) await new Promise((r) => setTimeout(r, 20));
    expect([...server.loaded]).toEqual(["3"]);
    server.hold = false;
    expect((await pool.generate(request(8))).version).toBe(3);
  });
});

describe("the sync probe after each weight load", () => {
  /**
   * Two servers and a trainer that scores their tokens as they sampled them, until `drift()`:
   * from then on the servers serve other weights than the trainer's (log-probs off by `drift`).
   */
  async function probedPool(options: { tied: boolean; drift: number }) {
    const servers = await Promise.all([0, 1].map((i) => testServer(i)));
    const log: string[] = [];
    const pool = new EnginePool(
      testWire,
      servers.map((s) => s.url),
      { requestTimeoutS: 5, maxRetries: 2, model: "m", lora: false, log: (l) => log.push(l) },
    );
    const dir = mkdtempSync(path.join(tmpdir(), "arl-probe-"));
    const scored: { ids: number[]; mask: number[] }[] = [];
    let drifting = false;
    const trainer = {
      request: async (method: string, params: Record<string, unknown>) => {
        if (method === "save") {
          const folder = params.path as string;
          mkdirSync(folder, { recursive: true });
          writeFileSync(
            path.join(folder, "config.json"),
            JSON.stringify({ model_type: "qwen3", tie_word_embeddings: options.tied }),
          );
          return { files: [], policy_version: Number(path.basename(folder).slice(1)) };
        }
        // logprobs: one sequence, the probe prompt then the server's two tokens (the test wire answers lps -0.5, -0.25).
        const ids = params.ids as { values: Int32Array };
        const mask = params.mask as { values: Uint8Array };
        scored.push({ ids: Array.from(ids.values), mask: Array.from(mask.values) });
        const shift = drifting ? options.drift : 0;
        const lps = Float32Array.from([0, 0, -0.5 + shift, -0.25 + shift]);
        return { logprobs: { values: lps, offsets: Int32Array.of(0, 4) } };
      },
    };
    const probe = {
      tokens: 2,
      tolerance: 1e-3,
      prompt: Int32Array.of(7, 8),
      seed: 11,
      model: "m",
      lora: false,
      dtype: "float32",
    };
    const sync = new WeightSync(trainer as never, pool, dir, false, probe);
    return { servers, pool, log, sync, scored, drift: () => (drifting = true) };
  }

  it("keeps a server whose log-probs of the probe are the trainer's, scoring exactly the prompt and the tokens it sampled", async () => {
    const { pool, sync, scored } = await probedPool({ tied: false, drift: 0 });
    await sync.sync(1);
    expect(pool.servers.map((s) => [s.state, s.version])).toEqual([
      ["live", 1],
      ["live", 1],
    ]);
    // Each server's own generation (ids [server index, seed]) after the probe prompt; the mask reads the generated tokens only.
    expect(scored).toEqual([
      { ids: [7, 8, 0, 11], mask: [0, 0, 1, 1] },
      { ids: [7, 8, 1, 11], mask: [0, 0, 1, 1] },
    ]);
    expect(sync.takeProbeGap()).toBe(0);
    // The probe is no rollout request: the pool's counts stay at zero.
    expect(pool.counts.requests).toBe(0);
  });

  it("takes out a server that loaded the weights but serves others, naming tied embeddings first when the model ties them", async () => {
    const { pool, sync, log, drift } = await probedPool({ tied: true, drift: 0.48 });
    await sync.sync(1);
    drift();
    // Both servers now differ from the trainer by 0.48 nats: the sync has no server left.
    const failed = (await sync.sync(2).catch((e: unknown) => e)) as WeightSyncError;
    expect(failed).toBeInstanceOf(WeightSyncError);
    // A resume would meet the same servers: the run is refused with what would help instead.
    const stopped = (await syncEngine(
      { engine: { weights: { sync: () => Promise.reject(failed) } } as unknown as RunEngine },
      2,
    ).catch((e: unknown) => e)) as RunError;
    expect(stopped.resumable).toBe(false);
    expect(stopped.message).toContain("start a new run from an untied copy of the model");
    expect(stopped.message).not.toContain("resume once");
    expect(pool.servers.every((s) => s.state === "dead")).toBe(true);
    const reason = pool.servers[0]!.lastError ?? "";
    expect(reason).toMatch(
      /^after loading policy version 2, its log-probs of the sync probe's 2 tokens differ from the trainer's by 0\.480 nats on average \(largest 0\.480\), above resources\.rollout\.sync_probe\.tolerance 0\.001/,
    );
    expect(reason).toMatch(
      /likely causes: \(1\) the model ties its embeddings \(tie_word_embeddings in config\.json\)/,
    );
    expect(log.join("\n")).toContain("inference server 0");
  });

  it("names no tied embeddings for an untied model, and a gap within the tolerance passes", async () => {
    const small = await probedPool({ tied: false, drift: 5e-4 });
    small.drift();
    await small.sync.sync(1);
    expect(small.pool.live()).toHaveLength(2);
    expect(small.sync.takeProbeGap()).toBeCloseTo(5e-4, 6);
    const large = await probedPool({ tied: false, drift: 0.1 });
    large.drift();
    await expect(large.sync.sync(1)).rejects.toThrow(/likely causes: \(1\) the server serves another model/);
  });
});
