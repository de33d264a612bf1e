// reasoning-gym through the env host, against the real library (docs/env-libraries.md,
// "reasoning-gym"): a chain_sum entry is the episode's question, its reply scored by the dataset's
// own score_answer (right 1, wrong 0, the same numbers the library gives for the same texts), its
// answer the walkthrough; the words of the questions are the vocabulary.
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { reasoningGymLibrary } from "../../src/contracts/libraries/reasoning-gym.js";
import { planEnv, provisionedKind, pythonJson, skipWithout } from "./host-library-support.js";

const KNOBS = { dataset: "chain_sum", size: 4, seed: 7, config: { min_terms: 2, max_terms: 2 } };

const skip = skipWithout("reasoning_gym");

describe.skipIf(skip)(
  skipTitle("reasoning-gym through the env host", skip, "needs reasoning-gym in .venv: npm run setup:envs"),
  () => {
    const env = planEnv(reasoningGymLibrary, KNOBS);
    const provisioned = provisionedKind(reasoningGymLibrary, env);

    it("a reply is scored by the dataset's score_answer: the right answer 1, a wrong one 0, as the library scores them", async () => {
      const { kind } = provisioned();
      const [answer] = (await kind.walkthrough!(env, 1))!.map((c) => String(c.arguments.command));
      expect(answer).toMatch(/^<answer>-?\d+<\/answer>$/);
      const right = `Adding them up: ${answer}`;
      const wrong = "<answer>1000000</answer>";
      const scored = [];
      for (const text of [right, wrong, "no tag at all"]) {
        const episode = await kind.create(env, 1, 0);
        const question = (await episode.reset()).text;
        scored.push({ question, signals: await episode.finalAnswer!(text), outcome: await episode.outcome() });
        await episode.close();
      }
      const library = pythonJson(
        [
          "import json, sys, reasoning_gym",
          "from reasoning_gym.utils import extract_answer",
          "d = reasoning_gym.create_dataset('chain_sum', size=4, seed=7, min_terms=2, max_terms=2)",
          "e = d[1]",
          "print(json.dumps({'question': e['question'], 'scores': [d.score_answer(extract_answer(t), e) for t in json.loads(sys.argv[1])]}))",
        ].join("\n"),
        [JSON.stringify([right, wrong, "no tag at all"])],
      ) as { question: string; scores: number[] };
      expect(scored.map((s) => s.question)).toEqual([library.question, library.question, library.question]);
      expect(library.scores).toEqual([1, 0, 0]);
      expect(scored.map((s) => s.signals)).toEqual([
        { score: 1, correct: true, answered: true },
        { score: 0, correct: false, answered: true },
        { score: 0, correct: false, answered: false },
      ]);
      expect(scored.map((s) => s.outcome)).toEqual(scored.map((s) => s.signals));
    });

    it("prepares the dataset's entries as its tasks, and their words are the vocabulary", () => {
      const { kind, logs } = provisioned();
      expect(logs.join("\n")).toMatch(/reasoning_gym .*prepared 4 tasks/);
      expect(kind.vocabulary(env)).toEqual(expect.arrayContaining(["answer", "State", "the"]));
    });
  },
);
