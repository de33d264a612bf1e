// Load: 32 agent programs at once against one gateway, each carrying a token of its own through
// its model calls (in its messages) and back (in its outcome), so that a session mixed up with
// another would show; one program kills itself in the middle of a call. No session is lost or
// mixed up, the killed one is an env error, and the gateway serves on.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentEnv } from "../../src/envs/adapters/agent.js";
import type { Plan } from "../../src/plan/schema.js";
import { playAgentEpisode, type AgentEpisodeContext } from "../../src/runtime/run/agent-episode.js";
import { agentEpisodeContext, agentPlan } from "../helpers/agent-plans.js";

const PROGRAMS = 32;
const KILLED = 13;

// Two calls that continue one conversation, then the token back as the outcome; the program of
// the task marked `kill` makes its first call, sends its second and kills itself once the
// request is written, before the answer comes.
const PROGRAM = `
const { task } = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
const chat = (messages) => fetch(process.env.OPENAI_BASE_URL + "/chat/completions", {
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer " + process.env.OPENAI_API_KEY },
  body: JSON.stringify({ model: "policy", messages, max_tokens: 3 }),
}).then((r) => r.json());
(async () => {
  const messages = [{ role: "user", content: "token tok" + task.token }];
  const first = await chat(messages);
  messages.push({ role: "assistant", content: first.choices[0].message.content }, { role: "user", content: "again tok" + task.token });
  if (task.kill) {
    const url = new URL(process.env.OPENAI_BASE_URL + "/chat/completions");
    const body = JSON.stringify({ model: "policy", messages, max_tokens: 3 });
    const req = require("node:http").request(url, { method: "POST", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), authorization: "Bearer " + process.env.OPENAI_API_KEY } });
    req.on("finish", () => process.kill(process.pid, "SIGKILL"));
    req.end(body);
    return;
  }
  await chat(messages);
  console.log(JSON.stringify({ signals: { ok: true, steps: task.token } }));
})();
`;

let plan: Plan;
let ctx: AgentEpisodeContext & { gateway: NonNullable<AgentEpisodeContext["gateway"]> };

beforeAll(async () => {
  const tasks = Array.from({ length: PROGRAMS }, (_, i) => ({
    token: 1000 + i,
    ...(i === KILLED ? { kill: true } : {}),
  }));
  const made = agentPlan(["node", "load.cjs"], tasks);
  plan = made.plan;
  writeFileSync(path.join(made.dir, "load.cjs"), PROGRAM);
  ctx = await agentEpisodeContext(plan, made.dir, ["token", "again", ...tasks.map((t) => `tok${t.token}`)]);
});

afterAll(async () => {
  await ctx.gateway.close();
});

describe("the gateway under load", () => {
  it("32 programs at once, one killed mid-call: every session keeps its own calls and outcome, the killed one is an env error", async () => {
    const env = plan.envs.helper as AgentEnv;
    const requestsBefore = ctx.gateway.stats.requests;
    const played = await Promise.all(
      Array.from({ length: PROGRAMS }, (_, task) =>
        playAgentEpisode(
          ctx,
          { task: { env: "helper", id: task }, group: task, sample: 0, split: "train", iteration: 1 },
          env,
          500 + task,
        ),
      ),
    );
    played.forEach(({ episode, calls }, task) => {
      if (task === KILLED) {
        expect(episode.end).toBe("env_error");
        expect(episode.error).toMatch(/was killed by SIGKILL/);
        return;
      }
      expect(episode.end, `task ${task}`).toBe("finished");
      // Its own token came back as its outcome, and its calls carried its token only.
      expect(episode.final.env("steps"), `task ${task}`).toBe(1000 + task);
      expect(calls.calls).toBe(2);
      // What the program sent (the model's own replies may name any token of its vocabulary).
      const texts = episode.messages
        .filter((m) => m.role === "user")
        .map((m) => m.content)
        .join(" ");
      expect(texts).toContain(`token tok${1000 + task}`);
      expect(texts).toContain(`again tok${1000 + task}`);
      expect(texts.match(/tok\d+/g)?.every((t) => t === `tok${1000 + task}`)).toBe(true);
    });
    expect(ctx.gateway.stats.requests - requestsBefore).toBe(2 * PROGRAMS);
    // The gateway still serves after a client died mid-call.
    const again = await playAgentEpisode(
      ctx,
      { task: { env: "helper", id: 0 }, group: 99, sample: 0, split: "train", iteration: 1 },
      env,
      7,
    );
    expect(again.episode.end).toBe("finished");
  }, 60_000);
});
