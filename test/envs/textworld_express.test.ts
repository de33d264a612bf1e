// TextWorldExpress through the env host, against the real library (docs/env-libraries.md,
// "TextWorldExpress"): a CoinCollector game's gold path (the walkthrough) wins it, with the
// signals the library's own env reports for the same seed and actions; a wrong sequence does not.
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { textworldExpressLibrary } from "../../src/contracts/libraries/textworld-express.js";
import { planEnv, play, provisionedKind, pythonJson, skipWithout } from "./host-library-support.js";

const PARAMS = { numLocations: 3, numDistractorItems: 0, includeDoors: 0 };

const skip = skipWithout("textworld_express");

describe.skipIf(skip)(
  skipTitle(
    "TextWorldExpress through the env host",
    skip,
    "needs textworld-express in .venv, and Java 17 to play: npm run setup:envs, apt-get install openjdk-17-jre-headless",
  ),
  () => {
    const env = planEnv(textworldExpressLibrary, { game: "coin", game_params: PARAMS, step_limit: 30 }, { tasks: 2 });
    const provisioned = provisionedKind(textworldExpressLibrary, env);

    it("the gold path wins, with the signals TextWorldExpress's own env reports for the same actions; looking around does not", async () => {
      const { kind } = provisioned();
      const gold = (await kind.walkthrough!(env, 1))!.map((c) => String(c.arguments.command));
      expect(gold.at(-1)).toMatch(/take coin/);
      const won = await play(kind, env, 1, 0, gold);
      expect(won.outcome).toMatchObject({ won: true, lost: false, score: 1, moves: gold.length });
      const idle = await play(kind, env, 1, 0, ["look around", "inventory"]);
      expect(idle.outcome).toMatchObject({ won: false, score: 0 });
      const own = pythonJson(
        [
          "import json, sys",
          "from textworld_express import TextWorldExpressEnv",
          "env = TextWorldExpressEnv(envStepLimit=30)",
          "env.reset(seed=0, gameFold='train', gameName='coin', gameParams=sys.argv[1], generateGoldPath=True)",
          "seed = int(env.getValidSeedsTrain()[1])",
          "obs, infos = env.reset(seed=seed, gameFold='train', gameName='coin', gameParams=sys.argv[1], generateGoldPath=True)",
          "out = {'gold': list(env.getGoldActionSequence()), 'first': obs, 'steps': []}",
          "for a in out['gold']:",
          "    obs, r, done, i = env.step(a)",
          "    out['steps'].append({'text': obs, 'score': float(i['score']), 'won': bool(i['tasksuccess']), 'lost': bool(i['taskfailure']), 'moves': int(i['numMoves']), 'reward': float(r)})",
          "env.close(); print(json.dumps(out))",
        ].join("\n"),
        [
          Object.entries(PARAMS)
            .sort()
            .map(([k, v]) => `${k}=${v}`)
            .join(","),
        ],
      ) as { gold: string[]; first: string; steps: { text: string }[] };
      expect(gold).toEqual(own.gold);
      expect(won.first).toBe(own.first);
      expect(won.steps.map((s) => ({ text: s.text, ...s.signals }))).toEqual(own.steps);
    }, 120_000);
  },
);
