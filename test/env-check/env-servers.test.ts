// `arl env-check` against the field's own env servers, started on loopback from the venv `npm run
// setup:envservers` makes: AgentRL's task worker (agentrl-worker, `python -m agentrl.worker`)
// serving a counter task written here, and openenv-core's server (create_fastapi_app under
// uvicorn) serving a guessing game written here. Both deterministic (the counter is a function of
// its index; the game's secret of its seed) and with separate sessions: env-check passes them,
// listing the signals they report (their text ones as such, never a finding). An OpenEnv game
// whose reset draws its secret and a game number from an unseeded random number fails, naming
// determinism.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import {
  AGENTRL_COUNTER_TASK,
  ENV_SERVERS_NEED,
  envServersAvailable,
  freePort,
  startPython,
  type ServerProcess,
} from "../helpers/env-servers.js";
import { skipTitle } from "../helpers/skip-reporter.js";

/** Guess a number from 1 to 4: the secret is seed % 4 + 1, or (argv 2 "unseeded") a random draw at each reset, which also names a random game number. */
const GUESS_SERVER = `
import random, sys
import uvicorn
from openenv.core.env_server import Action, Environment, Observation, State, create_fastapi_app

class GuessAction(Action):
    guess: int

class GuessObservation(Observation):
    message: str
    tries: int

class Game(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self):
        super().__init__()
        self._state = State(step_count=0)
        self.secret = 1

    def reset(self, seed=None, episode_id=None, **kwargs):
        unseeded = sys.argv[2] == "unseeded"
        self.secret = random.randint(1, 4) if unseeded else (seed or 0) % 4 + 1
        self._state = State(episode_id=episode_id, step_count=0)
        game = f" (game {random.randint(0, 10**9)})" if unseeded else ""
        return GuessObservation(message="Guess a number from 1 to 4." + game, tries=0, reward=0.0, done=False)

    def step(self, action, **kwargs):
        self._state.step_count += 1
        tries = self._state.step_count
        if action.guess == self.secret:
            return GuessObservation(message="right", tries=tries, reward=1.0, done=True)
        return GuessObservation(message="higher" if action.guess < self.secret else "lower", tries=tries, reward=0.0, done=False)

    @property
    def state(self):
        return self._state

app = create_fastapi_app(Game, GuessAction, GuessObservation, max_concurrent_envs=8)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
`;

const available = envServersAvailable();
const dir = mkdtempSync(path.join(tmpdir(), "arl-env-check-servers-"));
const findings = (stdout: string): string[] => stdout.split("\n").filter((l) => l.includes("FINDING"));

function spec(name: string, env: string): string {
  const file = path.join(dir, `${name}.arl`);
  writeFileSync(
    file,
    `experiment ${name} {\n  seed: 7\n  policy { model: "builtin:tiny" }\n${env}\n  reward { r: outcome.reward }\n  eval { success: outcome.reward >= 1 }\n}\n`,
  );
  return file;
}

describe.skipIf(!available)(
  skipTitle("arl env-check against AgentRL's worker and OpenEnv's server", !available, ENV_SERVERS_NEED),
  () => {
    const servers: ServerProcess[] = [];
    const urls = new Map<string, string>();
    beforeAll(async () => {
      writeFileSync(path.join(dir, "counter_task.py"), AGENTRL_COUNTER_TASK);
      writeFileSync(
        path.join(dir, "worker.yaml"),
        "counter:\n  module: counter_task.Counter\n  parameters:\n    name: counter\n    concurrency: 4\n",
      );
      const workerPort = await freePort();
      const worker = `http://127.0.0.1:${workerPort}/api`;
      servers.push(
        await startPython(
          ["-m", "agentrl.worker", "counter", "-c", "worker.yaml", "--host", "127.0.0.1", "--port", String(workerPort)],
          dir,
          workerPort,
          `${worker}/worker_status`,
        ),
      );
      urls.set("agentrl", worker);
      writeFileSync(path.join(dir, "guess_server.py"), GUESS_SERVER);
      for (const mode of ["seeded", "unseeded"]) {
        const port = await freePort();
        servers.push(
          await startPython(["guess_server.py", String(port), mode], dir, port, `http://127.0.0.1:${port}/health`),
        );
        urls.set(mode, `http://127.0.0.1:${port}`);
      }
    }, 240_000);
    afterAll(async () => {
      await Promise.all(servers.map((s) => s.kill()));
    });

    it("passes AgentRL's worker serving a deterministic task", async () => {
      const file = spec(
        "agentrl_counter",
        `  env counter {
    kind: agentrl
    url: "${urls.get("agentrl")}"
    task: "counter"
    tasks: 4
    split { train: 0.5, test: 0.5 }
    timeout_s: 10
    signals {
      reward { scope: outcome, type: number, min: 0, max: 1 }
      success { scope: outcome, type: number, min: 0, max: 1 }
      completed { scope: outcome, type: bool }
      score { scope: outcome, type: number, min: 0, max: 1 }
    }
    tool step { description: "advance the counter" }
    tool noop { description: "do nothing" }
  }`,
      );
      const run = await runArl(["env-check", file], { cwd: dir });
      expect(findings(run.stdout), run.stdout).toEqual([]);
      expect(run.stdout).toContain("env 'counter' (agentrl), of agentrl_counter/default:");
      expect(run.stdout).toContain("probed tasks 0, 2: 4 actions each from calls built from the tools' schemas");
      expect(run.stdout).toMatch(/signal completed \(outcome, bool\): seen false, true/);
      expect(run.stdout).toMatch(/signal reward \(outcome, number, \[0, 1\]\): seen 0 \.\. 1/);
      // AgentRL's status is text: listed, never a finding (no declaration can hold it).
      expect(run.stdout).toMatch(
        /signal status \(text, undeclared: no signal type holds text, so nothing reads it\): seen "completed", "running"/,
      );
      expect(run.stdout).toMatch(/latency: reset median [\d.]+ ms, p95 [\d.]+ ms \(8\); step median/);
      expect(run.stdout).toContain("1 env of 1 plan checked");
      expect(run.code).toBe(0);
    }, 120_000);

    it("passes OpenEnv's server with a seeded game, and fails one whose reset ignores the seed, naming determinism", async () => {
      const runs = new Map<string, { code: number; stdout: string }>();
      for (const mode of ["seeded", "unseeded"]) {
        const file = spec(
          `openenv_${mode}`,
          `  env guess {
    kind: openenv
    url: "${urls.get(mode)}"
    tasks: 8
    timeout_s: 10
    max_sessions: 8
    observation_field: "message"
    signals {
      reward { scope: outcome, type: number, min: 0, max: 1 }
      return { scope: outcome, type: number, min: 0, max: 1 }
      tries { scope: outcome, type: count }
      done { scope: outcome, type: bool }
    }
    tool guess {
      description: "Guess the number."
      parameters { guess { type: integer, description: "The guess." } }
    }
  }`,
        );
        runs.set(mode, await runArl(["env-check", file], { cwd: dir }));
      }
      const seeded = runs.get("seeded")!;
      expect(findings(seeded.stdout), seeded.stdout).toEqual([]);
      expect(seeded.stdout).toContain("env 'guess' (openenv), of openenv_seeded/default:");
      expect(seeded.stdout).toMatch(/signal tries \(outcome, count, \[0, inf\)\): seen 0 \.\. 4/);
      expect(seeded.stdout).toMatch(/signal message \(text, undeclared: [^)]*\): seen "Guess a number from 1 to 4\."/);
      expect(seeded.code).toBe(0);
      // Its reset draws the secret and a game number: named as determinism at the reset, never as isolation.
      const unseeded = runs.get("unseeded")!;
      expect(unseeded.code).toBe(1);
      const found = findings(unseeded.stdout);
      expect(found, unseeded.stdout).toHaveLength(2);
      for (const f of found)
        expect(f).toMatch(
          /^ {2}FINDING env 'guess': determinism: task \d, seed \d+: two episodes of the same task and seed, given the same \d actions, differ: at reset the observation differs: "Guess a number from 1 to 4\. \(game \d+\)" \(first\) vs "Guess a number from 1 to 4\. \(game \d+\)" \(second\)$/,
        );
    }, 120_000);
  },
);
