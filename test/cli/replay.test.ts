// `arl replay`: a short real run (builtin:tiny on the embedded trainer, after a short cold start,
// on the rooms quest) replays identically, episode by episode; an HTTP env server written here,
// whose reset draws a random number the task seed does not fix, makes the replay of its run fail
// at its first divergence with both texts; a buffer written before env transcripts were
// recorded is named as not replayable, never passed; and what bad input gets.
import { copyFileSync, cpSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBuffer, TokenBuffer } from "../../src/episode/buffer.js";
import { runArl } from "../helpers/cli.js";
import { COUNTER_SIGNALS_AND_TOOLS } from "../helpers/plans.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const embedded = `${process.execPath} ${path.join(repo, "dist", "trainer", "embedded", "main.js")}`;
const scripted = `${process.execPath} ${path.join(repo, "test", "doubles", "scripted-trainer.mjs")}`;

const roomsSpec = `
import "std/envs/rooms" as rooms

experiment replayed {
  seed: 3
  policy { model: "builtin:tiny", sampling { temperature: 1.0, max_new_tokens: 24 } }
  env quest extends rooms.world { rooms: 2, objects: 3, quest_length: 4, optimal_steps: 4, tasks: 40 }
  harness { tools: quest.tools, format: text_action, max_turns: 8, max_response_tokens: 24, on_budget: truncate }
  reward { success: outcome.success }
  algorithm { group_size: 2, advantage { baseline: leave_one_out } }
  rollout { tasks_per_batch: 3, iterations: 2, sft { demos: 40, epochs: 4, batch: 20, lr: 1e-2 } }
  eval { every: 2, tasks: 1, before_training: false }
}
`;

function runDirOf(cwd: string, experiment: string): string {
  const dir = path.join(cwd, "runs", experiment, "default");
  const [only] = readdirSync(dir);
  return path.relative(cwd, path.join(dir, only!));
}

async function trainedRun(spec: string, experiment: string, trainer: string): Promise<{ cwd: string; runDir: string }> {
  const cwd = mkdtempSync(path.join(tmpdir(), "arl-replay-"));
  writeFileSync(path.join(cwd, "spec.arl"), spec);
  const run = await runArl(["run", "spec.arl", "--out", "runs", "--trainer-command", trainer], { cwd });
  expect(run.code, run.stderr).toBe(0);
  return { cwd, runDir: runDirOf(cwd, experiment) };
}

describe("arl replay of a builtin env's run", () => {
  let cwd = "";
  let runDir = "";
  beforeAll(async () => {
    ({ cwd, runDir } = await trainedRun(roomsSpec, "replayed", embedded));
  }, 120_000);

  it("replays every episode identically, tool calls included, and exits 0", async () => {
    const { records } = readBuffer(path.join(cwd, runDir, "buffer.arlbuf"));
    // The cold start taught the model commands: some episodes executed tool calls.
    expect(records.some((r) => r.transcript!.exchanges.some((e) => e.op === "step"))).toBe(true);
    const r = await runArl(["replay", runDir], { cwd });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout.match(/: identical \(\d+ exchanges with the env, rewards [\d.]+\)$/gm)).toHaveLength(
      records.length,
    );
    expect(r.stdout).toContain("iteration 1, episode 0 (group 0, sample 0): env quest, task ");
    expect(r.stdout).toContain(
      `replayed ${records.length} episodes of replayed/default: ${records.length} identical, 0 diverged\n`,
    );
  });

  it("replays one iteration, or one episode by number or GROUP/SAMPLE", async () => {
    const one = await runArl(["replay", runDir, "--iteration", "1"], { cwd });
    expect(one.code).toBe(0);
    expect(one.stdout).not.toContain("iteration 2,");
    const episode = await runArl(["replay", runDir, "--episode", "1/1"], { cwd });
    expect(episode.code).toBe(0);
    expect(episode.stdout).toMatch(/^iteration 2, episode 3 \(group 1, sample 1\): .*: identical/);
    expect(episode.stdout).toContain("replayed 1 episode of replayed/default: 1 identical, 0 diverged");
  });

  it("names an episode an older arl recorded (no env transcript) as not replayable, and exits 1", async () => {
    const { records } = readBuffer(path.join(cwd, runDir, "buffer.arlbuf"));
    const old = path.join(mkdtempSync(path.join(tmpdir(), "arl-replay-old-")), "buffer.arlbuf");
    const buffer = new TokenBuffer(old);
    buffer.append(records.map(({ transcript: _t, ...rest }) => rest));
    buffer.close();
    const copy = path.join(cwd, "old-run");
    cpSync(path.join(cwd, runDir), copy, { recursive: true });
    copyFileSync(old, path.join(copy, "buffer.arlbuf"));
    const r = await runArl(["replay", "old-run", "--iteration", "2"], { cwd });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "cannot be replayed: the buffer does not record what this episode asked of its env (it was written by an arl older than replay)",
    );
    expect(r.stdout).toMatch(/0 identical, 0 diverged, \d+ could not be replayed/);
  });

  it("answers bad input with a usage error (2) or says what the buffer holds (1)", async () => {
    expect((await runArl(["replay"], { cwd })).code).toBe(2);
    expect((await runArl(["replay", runDir, "--episode", "x"], { cwd })).code).toBe(2);
    const notRun = await runArl(["replay", "."], { cwd });
    expect(notRun.code).toBe(2);
    const missing = await runArl(["replay", runDir, "--iteration", "9"], { cwd });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("iteration 9 is not in the buffer; it holds iterations 1-2");
  });
});

/**
 * The counter task over ARL's HTTP wire (src/envs/adapters/http.ts), with a flaw: its reset
 * observation carries a number from Math.random, which the task and seed it is sent do not fix.
 */
function unseededCounterServer(): Promise<Server> {
  const sessions = new Map<number, { count: number; target: number }>();
  let next = 0;
  const body = async (req: IncomingMessage) => {
    let text = "";
    for await (const chunk of req) text += String(chunk);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const server = createServer((req, res) => {
    void body(req).then((b) => {
      const op = req.url?.split("/").pop();
      const session = sessions.get(b.session as number);
      let answer: unknown = {};
      if (op === "reset") {
        const id = next++;
        sessions.set(id, { count: 0, target: 1 + ((b.index as number) % 3) });
        answer = {
          session: id,
          observation: `Count to ${1 + ((b.index as number) % 3)}. Your lucky number is ${Math.random()}.`,
          signals: { progress: 0 },
        };
      } else if (op === "step" && session) {
        const call = b.call as { name: string };
        if (call.name === "step") session.count++;
        answer = {
          observation: `count ${session.count}`,
          terminated: session.count >= session.target,
          signals: { progress: Math.min(1, session.count / session.target) },
        };
      } else if (op === "outcome" && session) answer = { signals: { success: session.count >= session.target } };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

describe("arl replay of an env whose reset ignores the seed", () => {
  let server: Server;
  beforeAll(async () => {
    server = await unseededCounterServer();
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("fails, naming each episode's first divergence with both texts", async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const spec = `
experiment unseeded {
  seed: 4
  policy { model: "builtin:tiny" }
  env counter {
    kind: http
    url: "${url}"
    task: "counter"
    tasks: 6
    timeout_s: 5
${COUNTER_SIGNALS_AND_TOOLS}
  }
  harness { max_turns: 4 }
  reward { success: outcome.success }
  algorithm { group_size: 2, advantage { baseline: leave_one_out } }
  rollout { tasks_per_batch: 2, iterations: 1 }
  eval { every: 1, tasks: 1, before_training: false }
}
`;
    const { cwd, runDir } = await trainedRun(spec, "unseeded", scripted);
    const r = await runArl(["replay", runDir], { cwd });
    expect(r.code, r.stderr).toBe(1);
    const diverged = r.stdout.match(
      /^iteration 1, episode \d \(group \d, sample \d\): env counter, task \d, seed \d+: DIVERGED at exchange 1 of \d+, the reset: the observation differs$/gm,
    );
    expect(diverged).toHaveLength(4);
    expect(r.stdout).toMatch(
      /\n {4}recorded: Count to \d\. Your lucky number is 0\.\d+\.\n {4}replayed: Count to \d\. Your lucky number is 0\.\d+\.\n/,
    );
    expect(r.stdout).toContain("replayed 4 episodes of unseeded/default: 0 identical, 4 diverged\n");
  }, 60_000);
});
