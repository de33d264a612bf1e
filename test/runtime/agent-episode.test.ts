// Agent episodes (src/runtime/run/agent-episode.ts) on the real gateway and model half over the
// embedded trainer, with a tiny node program whose behaviour its argument picks: an outcome
// POSTed or printed, a crash, a time-out, no outcome, a bad outcome, a call with a wrong key, no
// call at all, and a Python program without its module. Every fault is an env error with a
// one-line reason and its stderr tail in agent-logs/; a good episode trains on the ids served.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentEnv } from "../../src/envs/agent.js";
import type { Plan } from "../../src/plan/schema.js";
import { Role } from "../../src/runtime/buffer.js";
import { playAgentEpisode, type AgentEpisodeContext } from "../../src/runtime/run/agent-episode.js";
import { TrainerPolicy } from "../../src/runtime/policy.js";
import { agentEpisodeContext, agentPlan } from "../helpers/agent-plans.js";

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
  ({ dir, plan } = agentPlan(["node", "agent.cjs"], [{ word: "world" }, { word: "again" }, { word: "world" }, { word: "again" }]));
  writeFileSync(path.join(dir, "agent.cjs"), PROGRAM);
  ctx = await agentEpisodeContext(plan, dir, ["hello", "world", "again"]);
});

afterAll(async () => {
  await ctx.gateway?.close();
});

function agentEnv(mode: string, o: Partial<AgentEnv> = {}): AgentEnv {
  const env = plan.envs.helper as AgentEnv;
  return { ...env, command: mode === "python" ? ["python3", "-c", "import arl_no_such_module"] : ["node", "agent.cjs", mode], ...o };
}

const slot = (task: number, sample: number) => ({ task: { env: "helper", id: task }, group: 0, sample, split: "train" as const, iteration: 1 });

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
    const played = await Promise.all(cases.map(([mode, o], i) => playAgentEpisode(ctx, slot(0, 10 + i), agentEnv(mode, o), 13)));
    played.forEach((p, i) => {
      const [mode, , reason] = cases[i]!;
      expect(p.episode.end, mode).toBe("env_error");
      expect(p.episode.error, mode).toMatch(reason);
      expect(p.episode.error, mode).not.toContain("\n");
      const log = path.join(ctx.runDir.dir, "agent-logs", `train-1-helper-0-0-${10 + i}.log`);
      expect(readFileSync(log, "utf8"), mode).toContain(mode === "crash" ? "Traceback: the agent fell over" : "--- stderr");
    });
  });

  it("a failure of ours (the trainer died while serving a call) stops the program and propagates", async () => {
    const failing = new TrainerPolicy({ request: () => Promise.reject(new Error("the trainer exited with code 137")) });
    const begun = Date.now();
    await expect(playAgentEpisode({ ...ctx, rolloutPolicy: failing }, slot(0, 30), agentEnv("line"), 14)).rejects.toThrow("the trainer exited with code 137");
    expect(Date.now() - begun).toBeLessThan(10_000);
  });
});
