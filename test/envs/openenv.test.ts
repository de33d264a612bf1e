// kind: openenv against openenv-core 0.3.0's own server (create_fastapi_app under uvicorn) serving
// two small envs written here, on loopback: episodes over /ws, the action schema compared at
// provision, the server's concurrency limit, time-outs and a server killed mid-episode as env
// errors, a run end to end. Malformed answers come from a Node WebSocket server ('ws') that
// answers the protocol's messages with broken ones.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { WebSocketServer } from "ws";
import type { DeclaredTool } from "../../src/contracts/env.js";
import { openenvEnv, type OpenEnvEnv } from "../../src/envs/adapters/openenv.js";
import { envKinds } from "../../src/envs/registry.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { readBuffer } from "../../src/episode/buffer.js";
import { splitTasks } from "../../src/plan/splits.js";
import { compilePlans, scriptedTrainerScript } from "../helpers/plans.js";
import {
  COMMON_ENV_FIELDS,
  ENV_SERVERS_NEED,
  envFailure as failure,
  envServersAvailable,
  freePort,
  startPython,
  type ServerProcess,
} from "../helpers/env-servers.js";

// guess: the secret is seed % 4 + 1, a guess of 99 hangs. counter: `step` twice wins; the task
// whose seed is HANG hangs on its first step. judge: its verdict, from reset on, is missing
// (seed % 3 == 0: None, which is no signal), a string (1) or true (2); one `step` ends it.
const SERVER = `
import os, sys, time
from typing import Optional, Union
import uvicorn
from openenv.core.env_server import Action, Environment, Observation, State, create_fastapi_app

class GuessAction(Action):
    guess: int

class CounterAction(Action):
    pass

class GameObservation(Observation):
    message: str
    tries: int

class JudgeObservation(Observation):
    message: str
    verdict: Optional[Union[bool, str]] = None

class Game(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self):
        super().__init__()
        self._state = State(step_count=0)
        self.seed = 0

    def reset(self, seed=None, episode_id=None, **kwargs):
        self.seed = seed or 0
        self._state = State(episode_id=episode_id, step_count=0)
        if GAME == "judge":
            return JudgeObservation(message="Call step once.", verdict=[None, "yes", True][self.seed % 3], reward=0.0, done=False)
        return GameObservation(message="Guess a number from 1 to 4." if GAME == "guess" else "Call step twice.", tries=0, reward=0.0, done=False)

    def step(self, action, **kwargs):
        self._state.step_count += 1
        tries = self._state.step_count
        if GAME == "judge":
            return JudgeObservation(message="judged", verdict=[None, "yes", True][self.seed % 3], reward=1.0, done=True)
        if GAME == "counter":
            if self.seed == int(os.environ.get("HANG", "-1")):
                time.sleep(3600)
            return GameObservation(message=f"counter {tries}", tries=tries, reward=1.0 if tries >= 2 else 0.0, done=tries >= 2)
        secret = self.seed % 4 + 1
        if action.guess == 99:
            time.sleep(3600)
        if action.guess == secret:
            return GameObservation(message="right", tries=tries, reward=1.0, done=True)
        return GameObservation(message="higher" if action.guess < secret else "lower", tries=tries, reward=0.0, done=False)

    @property
    def state(self):
        return self._state

GAME = sys.argv[1]
app = create_fastapi_app(Game, GuessAction if GAME == "guess" else CounterAction, JudgeObservation if GAME == "judge" else GameObservation, max_concurrent_envs=int(sys.argv[3]))
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
`;

const available = envServersAvailable();
const dir = mkdtempSync(path.join(tmpdir(), "arl-openenv-"));
const GUESS: DeclaredTool = {
  name: "guess",
  description: "Guess the number.",
  parameters: {
    type: "object",
    properties: { guess: { type: "integer", description: "The guess." } },
    required: ["guess"],
    additionalProperties: false,
  },
};

async function startServer(
  game: "guess" | "counter" | "judge",
  maxEnvs: number,
  hang = -1,
): Promise<ServerProcess & { url: string }> {
  writeFileSync(path.join(dir, "game_server.py"), SERVER);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = await startPython(
    ["game_server.py", game, String(port), String(maxEnvs)],
    dir,
    port,
    `${url}/health`,
    { HANG: String(hang) },
  );
  return Object.assign(server, { url });
}

function makeEnv(url: string, overrides: Partial<OpenEnvEnv> = {}): OpenEnvEnv {
  return {
    kind: "openenv",
    ...COMMON_ENV_FIELDS,
    tasks: 8,
    timeout_s: 10,
    retries: 1,
    url,
    max_sessions: 2,
    observation_field: "message",
    max_response_bytes: 1 << 20,
    ...overrides,
  };
}

const guess = (n: number) => ({ name: "guess", arguments: { guess: n } });
const provision = (env: OpenEnvEnv, tools: DeclaredTool[] = [GUESS], log: string[] = []) =>
  openenvEnv.provision!(env, { name: "game", tools, runDir: dir, log: (l) => log.push(l) });

describe.skipIf(!available)(skipTitle("openenv env against openenv-core 0.3.0", !available, ENV_SERVERS_NEED), () => {
  let server: ServerProcess & { url: string };
  beforeAll(async () => {
    server = await startServer("guess", 2);
  }, 240_000);
  afterAll(async () => server?.kill());

  it("an episode over /ws: the observation field as text, its scalars and the reward as signals, done as the end", async () => {
    const env = makeEnv(server.url);
    const log: string[] = [];
    await provision(env, [GUESS], log);
    expect(log.join("\n")).toContain("its action matches tool 'guess'; at most 2 episodes at once");
    const episode = await openenvEnv.create(env, 6, 1); // seed 6: the secret is 3
    expect(await episode.reset()).toEqual({
      text: "Guess a number from 1 to 4.",
      signals: { message: "Guess a number from 1 to 4.", tries: 0, reward: 0, done: false },
    });
    expect(await episode.step(guess(1))).toEqual({
      text: "higher",
      signals: { message: "higher", tries: 1, reward: 0, done: false },
      terminated: false,
    });
    expect(await episode.step(guess(3))).toMatchObject({ text: "right", terminated: true });
    expect(await episode.outcome()).toEqual({ message: "right", tries: 2, reward: 1, return: 1 });
    await episode.close();
    const whole = await openenvEnv.create(makeEnv(server.url, { observation_field: null }), 6, 1);
    expect((await whole.reset()).text).toBe('{"message":"Guess a number from 1 to 4.","tries":0}');
    await whole.close();
  });

  it("provision refuses a tool that differs from the server's action schema, showing both", async () => {
    const asText: DeclaredTool = {
      ...GUESS,
      parameters: {
        type: "object",
        properties: { guess: { type: "string" } },
        required: ["guess"],
        additionalProperties: false,
      },
    };
    const error = await failure(provision(makeEnv(server.url), [asText]));
    expect(error.kind).toBe("protocol");
    expect(error.message).toContain("tool 'guess' has other parameters than the server's");
    expect(error.message).toContain(
      'declared: {"additionalProperties":false,"properties":{"guess":{"type":"string"}},"required":["guess"],"type":"object"}',
    );
    expect(error.message).toContain(
      'server:   {"additionalProperties":false,"properties":{"guess":{"type":"integer"}},"required":["guess"],"type":"object"}',
    );
  });

  it("holds episodes to max_sessions; a server fuller than declared is retried, then unavailable", async () => {
    const env = makeEnv(server.url, { max_sessions: 2 });
    const [a, b, c] = await Promise.all([0, 1, 2].map((t) => openenvEnv.create(env, t, 1)));
    await a!.reset();
    await b!.reset();
    let third = false;
    const waiting = c!.reset().then(() => (third = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(third).toBe(false); // waits for a free session rather than fail
    await a!.close();
    await waiting;
    expect(third).toBe(true);
    // Declared above the server's 2 (another spelling of the URL: its own queue): the third episode meets CAPACITY_REACHED.
    const over = makeEnv(`${server.url}/`, { max_sessions: 3, retries: 1 });
    const d = await openenvEnv.create(over, 3, 1);
    const error = await failure(d.reset());
    expect(error.kind).toBe("unavailable");
    expect(error.message).toContain("CAPACITY_REACHED");
    await b!.close();
    await c!.close();
  });

  it("a step past timeout_s is an env error; the server keeps that session until its step returns", async () => {
    const env = makeEnv(server.url, { timeout_s: 1.5, max_sessions: 2, retries: 0 });
    const hung = await openenvEnv.create(env, 0, 1);
    await hung.reset();
    expect((await failure(hung.step(guess(99)))).kind).toBe("timeout");
    await hung.close();
    const [next, full] = await Promise.all([0, 1].map((t) => openenvEnv.create(env, t, 1)));
    await next!.reset(); // the other session is free
    // OpenEnv 0.3.0 notices the closed socket only once the step returns: its session stays taken.
    expect((await failure(full!.reset())).message).toContain("CAPACITY_REACHED");
    await next!.close();
  });

  it("a run end to end: two iterations, the hanging task's episodes env errors, the others played", async () => {
    const spec = (url: string) => `
experiment openenv_counting {
  seed: 5
  policy { model: "builtin:tiny" }
  env counter {
    kind: openenv
    url: "${url}"
    tasks: 4
    split { train: 0.5, test: 0.5 }
    timeout_s: 2
    retries: 0
    max_sessions: 16
    observation_field: "message"
    signals {
      reward { scope: outcome, type: number, min: 0, max: 1 }
    }
    tool step { description: "advance the counter" }
  }
  harness { max_turns: 4 }
  reward { success: outcome.reward }
  algorithm {
    group_size: 2
    advantage { baseline: leave_one_out }
  }
  rollout { tasks_per_batch: 2, iterations: 2, concurrency: 4 }
  eval { every: 2, tasks: 1, k: [1], success: outcome.reward >= 1 }
}
`;
    const [probe] = compilePlans(spec("http://127.0.0.1:8000"));
    const hang = splitTasks("counter", probe!.envs.counter!, "train")[0]!;
    const own = await startServer("counter", 16, hang); // a hung step keeps its server session
    try {
      const [plan] = compilePlans(spec(own.url));
      const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-openenv-run-")), plan!);
      const summary = await executePlan({
        plan: plan!,
        runDir,
        trainer: { file: process.execPath, args: [scriptedTrainerScript] },
        envs: envKinds,
        log: () => undefined,
      });
      expect(summary.iterations).toBe(2);
      const { records } = readBuffer(runDir.bufferPath);
      const errored = records.filter((r) => r.end === "env_error");
      expect(errored.length).toBeGreaterThan(0);
      expect(errored.every((r) => r.task === hang)).toBe(true);
      expect(records.some((r) => r.task !== hang && r.end === "finished")).toBe(true);
      expect(runDir.readMetrics().reduce((s, m) => s + (m.env_errors as number), 0)).toBe(errored.length);
    } finally {
      await own.kill();
    }
  }, 240_000);

  it("a run whose env leaves out a signal the reward reads, or reports it mistyped: those episodes are env errors, the run goes on", async () => {
    const own = await startServer("judge", 16);
    try {
      const [plan] = compilePlans(`
experiment openenv_judged {
  seed: 3
  policy { model: "builtin:tiny" }
  env judge {
    kind: openenv
    url: "${own.url}"
    tasks: 12
    split { train: 0.5, test: 0.5 }
    timeout_s: 10
    retries: 0
    max_sessions: 16
    observation_field: "message"
    signals {
      verdict { scope: outcome, type: bool }
    }
    tool step { description: "ask for the verdict" }
  }
  harness { max_turns: 2 }
  reward { success: outcome.verdict }
  algorithm {
    group_size: 2
    advantage { baseline: leave_one_out }
  }
  rollout { tasks_per_batch: 6, iterations: 2, concurrency: 6 }
  eval { every: 2, tasks: 2, k: [1], success: outcome.verdict, before_training: true }
}
`);
      const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-openenv-judged-")), plan!);
      const log: string[] = [];
      const summary = await executePlan({
        plan: plan!,
        runDir,
        trainer: { file: process.execPath, args: [scriptedTrainerScript] },
        envs: envKinds,
        log: (l) => log.push(l),
      });
      expect(summary.iterations).toBe(2);
      const { records } = readBuffer(runDir.bufferPath);
      const played = records.filter((r) => r.end !== "env_error");
      expect(played.length).toBeGreaterThan(0);
      // Only the judge's missing and mistyped verdicts are env errors, each named with what came instead.
      for (const r of played) expect(r.task % 3).toBe(2);
      const errors = records.filter((r) => r.end === "env_error");
      expect(new Set(errors.map((r) => r.task % 3))).toEqual(new Set([0, 1]));
      const missing =
        "env 'judge' did not report the signal 'outcome.verdict' (it reported 'done', 'message', 'reward', 'return')";
      const mistyped =
        "env 'judge' reported the signal 'outcome.verdict' as \"yes\", but it is declared bool (a bool is true or false)";
      const lines = log.filter((l) => /^iteration \d+\/2:/.test(l) && l.includes("env error"));
      expect(lines.length).toBe(2);
      for (const line of lines)
        expect(
          [missing, mistyped].some((m) => line.includes(`(first: ${m})`)),
          line,
        ).toBe(true);
      // The evaluation before training, which no iteration line reports, says its env errors itself.
      expect(log).toContain(`eval before training: 1 of 2 episodes ended in an env error (first: ${mistyped})`);
      expect(runDir.readMetrics().reduce((s, m) => s + (m.env_errors as number), 0)).toBe(errors.length);
    } finally {
      await own.kill();
    }
  }, 240_000);

  // Last: it kills the shared server.
  it("a server killed mid-episode is an env error; a refused connection is unavailable", async () => {
    const env = makeEnv(server.url, { retries: 0, max_sessions: 1 });
    const episode = await openenvEnv.create(env, 0, 1);
    await episode.reset();
    await server.kill();
    expect((await failure(episode.step(guess(2)))).kind).toBe("crash");
    await episode.close();
    expect((await failure((await openenvEnv.create(env, 0, 1)).reset())).kind).toBe("unavailable");
  });
});

describe("openenv env: malformed answers are protocol errors", () => {
  let wss: WebSocketServer;
  let url = "";
  let answer: (message: { type: string }) => string = () => "";
  beforeAll(async () => {
    wss = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/ws" });
    await new Promise<void>((r) => wss.once("listening", () => r()));
    const address = wss.address();
    url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    wss.on("connection", (ws) =>
      ws.on("message", (data: Buffer) => ws.send(answer(JSON.parse(data.toString()) as { type: string }))),
    );
  });
  afterAll(() => new Promise<void>((r) => wss.close(() => r())));

  const observation = (o: object) =>
    JSON.stringify({ type: "observation", data: { observation: { message: "hi" }, reward: 0, done: false, ...o } });
  const cases: [string, string, (m: { type: string }) => string][] = [
    ["a message that is not JSON", "a message that is not JSON", () => "<html>"],
    [
      "an observation message without an observation",
      "without an observation object",
      () => JSON.stringify({ type: "observation", data: {} }),
    ],
    ["a reward that is not a number", '"reward" that is not a finite number', () => observation({ reward: "1" })],
    [
      "an observation without observation_field",
      "has no field 'message'",
      () => JSON.stringify({ type: "observation", data: { observation: { text: "x" } } }),
    ],
    [
      "a message past max_response_bytes",
      "above the env's max_response_bytes",
      () => observation({ observation: { message: "x".repeat(5000) } }),
    ],
    [
      "a VALIDATION_ERROR (our request refused)",
      "error VALIDATION_ERROR",
      () => JSON.stringify({ type: "error", data: { code: "VALIDATION_ERROR", message: "bad" } }),
    ],
  ];
  for (const [what, message, reply] of cases) {
    it(what, async () => {
      answer = reply;
      const episode = await openenvEnv.create(
        makeEnv(url, { max_response_bytes: 4096, retries: 0, max_sessions: 8 }),
        0,
        1,
      );
      const error = await failure(episode.reset());
      expect(error.kind).toBe("protocol");
      expect(error.message).toContain(message);
      await episode.close();
    });
  }

  it("an EXECUTION_ERROR is the server's crash", async () => {
    answer = (m) =>
      m.type === "reset"
        ? observation({})
        : JSON.stringify({ type: "error", data: { code: "EXECUTION_ERROR", message: "boom" } });
    const episode = await openenvEnv.create(makeEnv(url, { retries: 0, max_sessions: 8 }), 0, 1);
    await episode.reset();
    expect((await failure(episode.step(guess(1)))).kind).toBe("crash");
    await episode.close();
  });
});
