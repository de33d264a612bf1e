// reasoning-gym through the env host, against the real library (docs/env-libraries.md,
// "reasoning-gym"): a chain_sum entry is the episode's question, its reply scored by the dataset's
// own score_answer (right 1, wrong 0, the same numbers the library gives for the same texts), its
// answer the walkthrough; the words of the questions are the vocabulary.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvKind } from "../../src/contracts/env.js";
import { createHostEnvKinds, type HostLibraryEnv } from "../../src/envs/host/index.js";
import { reasoningGymLibrary } from "../../src/semantics/schema/libraries/reasoning-gym.js";
import { planEnv, python, pythonJson, skipWithout } from "./host-library-support.js";

const KNOBS = { dataset: "chain_sum", size: 4, seed: 7, config: { min_terms: 2, max_terms: 2 } };

describe.skipIf(skipWithout("reasoning_gym"))("reasoning-gym through the env host", () => {
  let kind: EnvKind<HostLibraryEnv>;
  const env = planEnv(reasoningGymLibrary, KNOBS);
  const logs: string[] = [];

  beforeAll(async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), "arl-rg-"));
    kind = createHostEnvKinds([reasoningGymLibrary], { root: runDir, python }).get("reasoning_gym")!;
    await kind.provision!(env, { name: "sums", runDir, log: (l) => logs.push(l) });
  }, 120_000);
  afterAll(async () => {
    await kind.shutdown?.();
  });

  it("a reply is scored by the dataset's score_answer: the right answer 1, a wrong one 0, as the library scores them", async () => {
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
    expect(logs.join("\n")).toMatch(/reasoning_gym .*prepared 4 tasks/);
    expect(kind.vocabulary(env)).toEqual(expect.arrayContaining(["answer", "State", "the"]));
  });
});
