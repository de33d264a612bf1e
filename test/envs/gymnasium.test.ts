// Gymnasium through the env host, against the real library (docs/env-libraries.md, "Gymnasium"): a
// Text-space env by entry point (runtime-gpu/tests/text_gym_envs.py), stepped until it terminates;
// the same seed and actions through gymnasium.make give the same observations, rewards and ends.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { gymnasiumLibrary } from "../../src/contracts/libraries/gymnasium.js";
import { planEnv, play, provisionedKind, pythonJson, skipWithout } from "./host-library-support.js";

const ENVS = fileURLToPath(new URL("../../runtime-gpu/tests", import.meta.url));
const WORDS = ["apple", "brick", "cloud", "dune", "ember", "frost", "grove", "harbor"];

const skip = skipWithout("gymnasium");

describe.skipIf(skip)(
  skipTitle("Gymnasium through the env host", skip, "needs gymnasium in .venv: npm run setup:envs"),
  () => {
    const env = planEnv(gymnasiumLibrary, { entry_point: "text_gym_envs:GuessWordEnv", kwargs: { max_guesses: 8 } });
    const pythonPath = [ENVS, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter);

    const provisioned = provisionedKind(gymnasiumLibrary, env, () => {
      process.env.PYTHONPATH = pythonPath;
    });

    it("guesses until the env terminates, with the observations, rewards and ends gymnasium.make gives for the same seed", async () => {
      const played = await play(provisioned().kind, env, 0, 11, WORDS);
      const last = played.steps.at(-1)!;
      expect(last.terminated).toBe(true);
      expect(last.signals).toMatchObject({ reward: 1, terminated: true, truncated: false });
      const own = pythonJson(
        [
          "import json, sys, gymnasium as gym",
          "env = gym.make(gym.envs.registration.EnvSpec(id='t/Guess', entry_point='text_gym_envs:GuessWordEnv'), disable_env_checker=True, max_guesses=8)",
          "obs, _ = env.reset(seed=11); out = {'first': obs, 'steps': []}",
          "for a in json.loads(sys.argv[1]):",
          "    obs, r, term, trunc, _ = env.step(a); out['steps'].append([obs, float(r), term, trunc])",
          "    if term or trunc: break",
          "print(json.dumps(out))",
        ].join("\n"),
        [JSON.stringify(WORDS)],
        { ...process.env, PYTHONPATH: pythonPath },
      ) as { first: string; steps: [string, number, boolean, boolean][] };
      expect(played.first).toBe(own.first);
      expect(played.steps.map((s) => [s.text, s.signals.reward, s.signals.terminated, s.signals.truncated])).toEqual(
        own.steps,
      );
      const rewards = own.steps.map((s) => s[1]);
      expect(played.outcome).toEqual({
        reward: 1,
        return: rewards.reduce((a, b) => a + b, 0),
        steps: own.steps.length,
        terminated: true,
        truncated: false,
      });
    }, 60_000);
  },
);
