// Agent episodes (src/runtime/run/agent-episode.ts) on the real gateway and model half over the
// embedded trainer, with a tiny node program whose behaviour its argument picks: an outcome
// POSTed or printed, a crash, a time-out, no outcome, a bad outcome, a call with a wrong key, no
// call at all, and a Python program without its module. Every fault is an env error with a
// one-line reason and its stderr tail in agent-logs/; a good episode trains on the ids served.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TrainerError } from "../../src/trainer/protocol/client.js";
import type { AgentEnv } from "../../src/envs/adapters/agent.js";
import type { Plan } from "../../src/plan/schema.js";
import { Role } from "../../src/episode/buffer.js";
import { playAgentEpisode, type AgentEpisodeContext } from "../../src/runtime/run/agent-episode.js";
import { TrainerPolicy } from "../../src/episode/policy.js";
import { agentEpisodeContext, agentPlan } from "../helpers/agent-plans.js";
import { killIfRunning, running } from "../helpers/processes.js";

const PROGRAM = `
const mode = process.argv[2];
const input = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
const call = (key) => fetch(process.env.OPENAI_BASE_URL + "/chat/completions", {
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer " + key },
  body: JSON.stringify({ model: "policy", messages: [{ role: "user", content: "hello " + input.task.word }], max_tokens: 4 }),
});
// Anthropic's SDKs read ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY and add /v1/messages.
const anthropic = () => fetch(process.env.ANTHROPIC_BASE_URL + "/v1/messages", {
  method: "POST",
  headers: { "content-type": "application/json", "x-api-key": process.env.ANTHROPIC_API_KEY },
  body: JSON.stringify({ model: "policy", max_tokens: 4, messages: [{ role: "user", content: "hello " + input.task.word }] }),
});
(async () => {
  if (mode === "sleep") return setInterval(() => {}, 1000);
  if (mode === "detach") {
    // Ten children in sessions of their own (node's detached is setsid), stdio closed: out of the group.
    const { spawn } = require("node:child_process");
    const pids = Array.from({ length: 10 }, () => spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { detached: true, stdio: "ignore" }));
    pids.forEach((c) => c.unref());
    require("node:fs").writeFileSync("detached.pids", pids.map((c) => c.pid).join(" "));
  }
  if (mode === "anthropic") {
    const r = await anthropic();
    if (r.status !== 200 || (await r.json()).type !== "message") throw new Error("call failed " + r.status);
  } else if (mode !== "nocall") {
    const r = await call(mode === "wrongkey" ? "sk-wrong" : process.env.OPENAI_API_KEY);
    if (mode !== "wrongkey" && r.status !== 200) throw new Error("call failed " + r.status);
  }
  const outcome = { signals: { ok: input.task.word === "world", steps: 2 } };
  if (mode === "post") {
    await fetch(process.env.ARL_OUTCOME_URL, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer " + process.env.OPENAI_API_KEY }, body: JSON.stringify(outcome) });
    console.log("posted");
  } else if (mode === "crash") {
    console.error("Traceback: the agent fell over");
    process.exit(2);
  } else if (mode === "noline") console.log("done, no outcome here");
  else if (mode === "bad") console.log(JSON.stringify({ signals: { ok: 1, steps: 2 } }));
  else console.log(JSON.stringify(outcome));
})();
`;

let dir: string;
let plan: Plan;
let ctx: AgentEpisodeContext;

beforeAll(async () => {
  ({ dir, plan } = agentPlan(
    ["node", "agent.cjs"],
    [{ word: "world" }, { word: "again" }, { word: "world" }, { word: "again" }],
  ));
  writeFileSync(path.join(dir, "agent.cjs"), PROGRAM);
  ctx = await agentEpisodeContext(plan, dir, ["hello", "world", "again"]);
});

afterAll(async () => {
  await ctx.gateway?.close();
});

function agentEnv(mode: string, o: Partial<AgentEnv> = {}): AgentEnv {
  const env = plan.envs.helper as AgentEnv;
  return {
    ...env,
    command: mode === "python" ? ["python3", "-c", "import arl_no_such_module"] : ["node", "agent.cjs", mode],
    ...o,
  };
}

/** A Python agent that imports the marker module only the user's own venv has, then calls the model once with the standard library. */
const VENV_PROGRAM = `
import json, os, sys, urllib.request
import arl_user_venv_marker
task = json.loads(sys.stdin.readline())["task"]
body = json.dumps({"model": "policy", "messages": [{"role": "user", "content": "hello " + task["word"]}], "max_tokens": 4}).encode()
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body, headers={"content-type": "application/json", "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
urllib.request.urlopen(request).read()
print(json.dumps({"signals": {"ok": arl_user_venv_marker.FROM_USER_VENV, "steps": 1}}))
`;

const slot = (task: number, sample: number) => ({
  task: { env: "helper", id: task },
  group: 0,
  sample,
  split: "train" as const,
  iteration: 1,
});

describe("agent episodes", () => {
  it("a POSTed or printed outcome ends the episode as finished, trained on the ids the gateway served", async () => {
    const posted = await playAgentEpisode(ctx, slot(0, 0), agentEnv("post"), 11);
    expect(posted.episode.end).toBe("finished");
    expect(posted.episode.final.env("ok")).toBe(true);
    expect(posted.calls).toEqual({ calls: 1, rewrites: 0 });
    expect(posted.episode.samples).toHaveLength(1);
    expect(posted.episode.turnEnds).toHaveLength(1);
    expect(Array.from(posted.episode.roles)).toContain(Role.generated);
    const viaAnthropic = await playAgentEpisode(ctx, slot(0, 2), agentEnv("anthropic"), 13);
    expect(viaAnthropic.episode.end).toBe("finished");
    expect(viaAnthropic.calls).toEqual({ calls: 1, rewrites: 0 });
    const printed = await playAgentEpisode(ctx, slot(1, 1), agentEnv("line"), 12);
    expect(printed.episode.end).toBe("finished");
    expect(printed.episode.final.env("ok")).toBe(false);
    expect(printed.episode.final.env("steps")).toBe(2);
  });

  it("every fault is an env error with a one-line reason and the stderr tail kept (crash, time-out, no or a bad outcome, a wrong key, no call, a missing Python module)", async () => {
    const cases = [
      ["crash", {}, /exited with code 2: Traceback: the agent fell over/],
      ["sleep", { timeout_s: 0.5 }, /did not finish within timeout_s 0.5 s/],
      ["noline", {}, /printed no outcome: its last stdout line is not JSON/],
      ["bad", {}, /reported ok = 1, but 'ok' is declared bool/],
      ["wrongkey", {}, /gateway session saw a fault/],
      ["nocall", {}, /made no model call/],
      ["python", {}, /no module 'arl_no_such_module'.*pip install arl_no_such_module/],
    ] as const;
    const played = await Promise.all(
      cases.map(([mode, o], i) => playAgentEpisode(ctx, slot(0, 10 + i), agentEnv(mode, o), 13)),
    );
    played.forEach((p, i) => {
      const [mode, , reason] = cases[i]!;
      expect(p.episode.end, mode).toBe("env_error");
      expect(p.episode.error, mode).toMatch(reason);
      expect(p.episode.error, mode).not.toContain("\n");
      const log = path.join(ctx.runDir.dir, "agent-logs", `train-1-helper-0-0-${10 + i}.log`);
      expect(readFileSync(log, "utf8"), mode).toContain(
        mode === "crash" ? "Traceback: the agent fell over" : "--- stderr",
      );
    });
  });

  it("a program started from the user's own activated venv runs that venv's python3 and imports its packages (the user's PATH wins)", async () => {
    const venv = mkdtempSync(path.join(tmpdir(), "arl-user-venv-"));
    execFileSync("python3", ["-m", "venv", "--without-pip", venv]);
    const site = execFileSync(
      path.join(venv, "bin", "python3"),
      ["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
      { encoding: "utf8" },
    ).trim();
    writeFileSync(path.join(site, "arl_user_venv_marker.py"), "FROM_USER_VENV = True\n");
    writeFileSync(path.join(dir, "venv_agent.py"), VENV_PROGRAM);
    // What `source VENV/bin/activate` does to the environment arl is started from.
    const saved = { PATH: process.env.PATH, VIRTUAL_ENV: process.env.VIRTUAL_ENV };
    process.env.PATH = [path.join(venv, "bin"), saved.PATH].join(path.delimiter);
    process.env.VIRTUAL_ENV = venv;
    try {
      const played = await playAgentEpisode(
        ctx,
        slot(0, 40),
        agentEnv("venv", { command: ["python3", "venv_agent.py"] }),
        15,
      );
      expect(played.episode.error).toBeUndefined();
      expect(played.episode.end).toBe("finished");
      expect(played.episode.final.env("ok")).toBe(true);
    } finally {
      process.env.PATH = saved.PATH;
      if (saved.VIRTUAL_ENV === undefined) delete process.env.VIRTUAL_ENV;
      else process.env.VIRTUAL_ENV = saved.VIRTUAL_ENV;
      rmSync(venv, { recursive: true, force: true });
    }
  });

  it("children that called setsid do not outlive the episode", async () => {
    let pids: number[] = [];
    try {
      // Unsandboxed: the children are found by their mark (in the sandbox, its pid namespace ends them).
      const played = await playAgentEpisode(
        ctx,
        slot(0, 50),
        agentEnv("detach", { sandbox: { ...agentEnv("detach").sandbox, mode: "off" } }),
        16,
      );
      expect(played.episode.end).toBe("finished");
      pids = readFileSync(path.join(dir, "detached.pids"), "utf8").split(" ").map(Number);
      expect(pids).toHaveLength(10);
      await new Promise((r) => setTimeout(r, 100));
      expect(pids.filter(running)).toEqual([]);
    } finally {
      pids.forEach(killIfRunning);
    }
  });

  it("a failure of ours (the trainer died while serving a call) stops the program and propagates", async () => {
    const failing = new TrainerPolicy({
      request: () => Promise.reject(new TrainerError("the trainer exited with code 137", "died")),
    });
    const begun = Date.now();
    await expect(
      playAgentEpisode({ ...ctx, rolloutPolicy: failing }, slot(0, 30), agentEnv("line"), 14),
    ).rejects.toThrow("the trainer exited with code 137");
    expect(Date.now() - begun).toBeLessThan(10_000);
  });
});
