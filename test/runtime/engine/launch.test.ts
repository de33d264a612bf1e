// Launched inference servers: the GPU layout, --engine-command's placeholders, and real child
// processes (test/doubles/health-server.mjs) started, health-checked, logged and stopped; a
// server that exits before it is ready fails the start with its log's end.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { vllmWire } from "../../../src/inference/engine/vllm-wire.js";
import {
  EngineLaunchError,
  engineCommandLine,
  LaunchedServers,
  serverDevices,
} from "../../../src/inference/engine/launch.js";
import type { Plan } from "../../../src/plan/schema.js";

const serverScript = fileURLToPath(new URL("../../doubles/health-server.mjs", import.meta.url));

const wire = vllmWire;

/** The plan fields the launcher reads. */
function plan(o: {
  backend?: "local" | "torch";
  gpus?: number;
  servers?: number;
  perServer?: number;
  loraRank?: number;
}): Plan {
  return {
    seed: 11,
    policy: { model: "hf:Qwen/Qwen3-0.6B", dtype: "bfloat16", lora: o.loraRank ? { rank: o.loraRank } : null },
    resources: {
      backend: o.backend ?? "torch",
      gpus: o.gpus ?? 2,
      nodes: 1,
      rollout: { engine: "vllm", servers: o.servers ?? 2, gpus_per_server: o.perServer ?? 1, launch: true, urls: [] },
    },
  } as unknown as Plan;
}

describe("launched inference servers", () => {
  it("get the GPUs after the trainer's, through the runtime's own CUDA_VISIBLE_DEVICES", () => {
    const p = plan({ gpus: 4, perServer: 2 });
    expect([0, 1].map((i) => serverDevices(p, i, undefined))).toEqual(["4,5", "6,7"]);
    expect([0, 1].map((i) => serverDevices(p, i, "0,2,4,6,8,10,12,14"))).toEqual(["8,10", "12,14"]);
    // The embedded trainer uses no GPU.
    expect(serverDevices(plan({ backend: "local", gpus: 0, perServer: 1 }), 1, undefined)).toBe("1");
  });

  it("--engine-command: words split on spaces, placeholders filled in each", () => {
    const line = engineCommandLine(
      "node bin/arl.js serve {plan}  --api vllm --port {port} --seed {seed} --tag s{index}-{model}",
      { port: 4242, model: "Qwen/Qwen3-0.6B", plan: "/runs/a b/plan.json", seed: 7, index: 1 },
    );
    expect(line).toEqual({
      command: "node",
      args: [
        "bin/arl.js",
        "serve",
        "/runs/a b/plan.json",
        "--api",
        "vllm",
        "--port",
        "4242",
        "--seed",
        "7",
        "--tag",
        "s1-Qwen/Qwen3-0.6B",
      ],
      env: {},
    });
  });

  it("start on free ports, each logged, health-checked until ready, and stop", async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), "arl-launch-"));
    const servers = await LaunchedServers.start({
      plan: plan({}),
      wire,
      runDir,
      engineCommand: `${process.execPath} ${serverScript} {port}`,
      planFile: "plan.json",
    });
    try {
      expect(servers.servers.map((s) => s.devices)).toEqual(["2", "3"]);
      expect(new Set(servers.servers.map((s) => s.url)).size).toBe(2);
      for (const s of servers.servers) expect((await fetch(`${s.url}/health`)).status).toBe(200);
    } finally {
      await servers.stop();
    }
    for (const s of servers.servers) {
      await expect(fetch(`${s.url}/health`)).rejects.toThrow();
      expect(readFileSync(path.join(runDir, "engines", `server-${s.index}.log`), "utf8")).toContain(
        `devices=${s.devices}`,
      );
    }
  });

  it("a command of the user's own gets what the weight sync needs of vLLM: development mode, and runtime LoRA loading under LoRA", async () => {
    for (const [loraRank, expected] of [
      [undefined, "dev_mode=1 lora_updating="],
      [8, "dev_mode=1 lora_updating=True"],
    ] as const) {
      const runDir = mkdtempSync(path.join(tmpdir(), "arl-launch-"));
      const servers = await LaunchedServers.start({
        plan: plan({ servers: 1, ...(loraRank ? { loraRank } : {}) }),
        wire,
        runDir,
        engineCommand: `${process.execPath} ${serverScript} {port}`,
        planFile: "plan.json",
      });
      await servers.stop();
      expect(readFileSync(path.join(runDir, "engines", "server-0.log"), "utf8")).toContain(expected);
    }
  });

  it("a server that exits before it is ready fails the start, quoting its log", async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), "arl-launch-"));
    const error = await LaunchedServers.start({
      plan: plan({ servers: 1 }),
      wire,
      runDir,
      engineCommand: `${process.execPath} ${serverScript} {port} exit`,
      planFile: "plan.json",
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineLaunchError);
    expect((error as Error).message).toMatch(
      /inference server 0 \(.*health-server\.mjs \d+ exit\) exited with status 3 before it could generate; the end of .*server-0\.log:\n {2}\| loading the model\n {2}\| RuntimeError: cannot load the model \(simulated\)/,
    );
  });
});
