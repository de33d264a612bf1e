// TextArena through the env host, against the real library (docs/env-libraries.md, "TextArena"):
// GuessTheNumber stepped end to end by a binary search that reads the game's hints, to a win; the
// same seed and moves through TextArena's own API give the same observations and the same reward.
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { textarenaLibrary } from "../../src/contracts/libraries/textarena.js";
import { act, planEnv, provisionedKind, pythonJson, skipWithout } from "./host-library-support.js";

const SEED = 3;

const skip = skipWithout("textarena");

describe.skipIf(skip)(
  skipTitle("TextArena through the env host", skip, "needs textarena in .venv: npm run setup:envs"),
  () => {
    const env = planEnv(textarenaLibrary, { env_id: "GuessTheNumber-v0-raw" });
    const provisioned = provisionedKind(textarenaLibrary, env);

    it("a binary search on the game's hints wins, with the observations and reward TextArena's own API gives for the same seed and moves", async () => {
      const episode = await provisioned().kind.create(env, 0, SEED);
      const texts = [(await episode.reset()).text];
      const moves: string[] = [];
      let [low, high] = [1, 20];
      let last;
      for (let turn = 0; turn < 10; turn++) {
        const guess = Math.floor((low + high) / 2);
        moves.push(`[${guess}]`);
        last = await episode.step(act(`[${guess}]`));
        texts.push(last.text);
        if (last.terminated) break;
        if (/higher/.test(last.text)) low = guess + 1;
        else if (/lower/.test(last.text)) high = guess - 1;
      }
      const outcome = await episode.outcome();
      await episode.close();
      expect(last?.terminated).toBe(true);
      expect(outcome).toEqual({ reward: 1, invalid_move: false, turns: moves.length, finished: true });
      const own = pythonJson(
        [
          "import json, sys, textarena as ta",
          "env = ta.make('GuessTheNumber-v0-raw'); env.reset(num_players=1, seed=int(sys.argv[1]))",
          "text = lambda o: '\\n'.join(str(m[1]) for m in o).strip()",
          "texts = [text(env.get_observation()[1])]",
          "for move in json.loads(sys.argv[2]):",
          "    done, _ = env.step(move)",
          "    if done: break",
          "    texts.append(text(env.get_observation()[1]))",
          "rewards, info = env.close()",
          "print(json.dumps({'texts': texts, 'reward': rewards[0], 'turns': info[0]['turn_count']}))",
        ].join("\n"),
        [String(SEED), JSON.stringify(moves)],
      ) as { texts: string[]; reward: number; turns: number };
      expect(texts.slice(0, -1)).toEqual(own.texts);
      expect([outcome.reward, outcome.turns]).toEqual([own.reward, own.turns]);
    }, 60_000);
  },
);
