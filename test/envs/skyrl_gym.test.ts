// skyrl-gym through the env host, against the real library (docs/env-libraries.md, "skyrl-gym"):
// rows from a JSON-lines file under the data root (hashed in the plan, checked at provision);
// gsm8k's single-step reply scored as skyrl-gym's own compute_score scores it, and
// gsm8k_multi_turn stepped end to end, a wrong reply then the right one.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { EnvError, type EnvKind } from "../../src/contracts/env.js";
import { createHostEnvKinds, type HostLibraryEnv } from "../../src/envs/adapters/env-host/libraries.js";
import { skyrlGymLibrary } from "../../src/contracts/libraries/skyrl-gym.js";
import { act, planEnv, python, pythonJson, skipWithout } from "./host-library-support.js";

const QUESTION = "A baker makes 12 loaves each hour for 6 hours. How many loaves is that?";
const row = (envClass: string, extra: object = {}) => ({
  prompt: [{ role: "user", content: QUESTION }],
  env_class: envClass,
  reward_spec: { method: "rule", ground_truth: "72" },
  ...extra,
});

const skip = skipWithout("skyrl_gym");

describe.skipIf(skip)(
  skipTitle("skyrl-gym through the env host", skip, "needs skyrl-gym in .venv: npm run setup:envs"),
  () => {
    let kind: EnvKind<HostLibraryEnv>;
    let root: string;
    let single: HostLibraryEnv;
    let multi: HostLibraryEnv;

    beforeAll(async () => {
      root = mkdtempSync(path.join(tmpdir(), "arl-sky-"));
      writeFileSync(path.join(root, "gsm8k.jsonl"), `${JSON.stringify(row("gsm8k"))}\n`);
      writeFileSync(
        path.join(root, "multi.jsonl"),
        `${JSON.stringify(row("gsm8k_multi_turn", { extra_info: { max_turns: 3 } }))}\n`,
      );
      single = planEnv(skyrlGymLibrary, { env_id: "gsm8k" }, { tasks: 1 }, { rows: "gsm8k.jsonl" }, root);
      multi = planEnv(skyrlGymLibrary, { env_id: "gsm8k_multi_turn" }, { tasks: 1 }, { rows: "multi.jsonl" }, root);
      kind = createHostEnvKinds([skyrlGymLibrary], { root, python }).get("skyrl_gym")!;
      for (const env of [single, multi])
        await kind.provision!(env, { name: "math", runDir: root, log: () => undefined, tools: [] });
    }, 120_000);
    afterAll(async () => {
      await kind.shutdown?.();
    });

    it("gsm8k: the reply is scored as skyrl-gym's compute_score scores it, 1 right and 0 wrong", async () => {
      const replies = ["12 * 6 = 72\n#### 72", "#### 71"];
      const scored = [];
      for (const reply of replies) {
        const episode = await kind.create(single, 0, 0);
        expect((await episode.reset()).messages).toEqual([{ role: "user", content: QUESTION }]);
        scored.push(await episode.finalAnswer!(reply));
        await episode.close();
      }
      const own = pythonJson(
        "import json, sys\nfrom skyrl_gym.envs.gsm8k.utils import compute_score\nprint(json.dumps([compute_score(r, '72') for r in json.loads(sys.argv[1])]))",
        [JSON.stringify(replies)],
      ) as number[];
      expect(own).toEqual([1, 0]);
      expect(scored).toEqual([
        { reward: own[0], return: own[0], turns: 1, done: true },
        { reward: own[1], return: own[1], turns: 1, done: true },
      ]);
    });

    it("gsm8k_multi_turn: stepped end to end, a wrong reply goes on and the right one ends it, with the rewards skyrl-gym's own env gives", async () => {
      const replies = ["#### 70", "#### 72"];
      const episode = await kind.create(multi, 0, 0);
      await episode.reset();
      const steps = [];
      for (const reply of replies) steps.push(await episode.step(act(reply)));
      const outcome = await episode.outcome();
      await episode.close();
      const own = pythonJson(
        [
          "import json, sys, skyrl_gym",
          "from omegaconf import OmegaConf",
          "row = json.loads(sys.argv[1])",
          "env = skyrl_gym.make('gsm8k_multi_turn', env_config=OmegaConf.create({}), extras={k: v for k, v in row.items() if k not in ('prompt', 'env_class')})",
          "env.init(row['prompt'])",
          "out = [env.step(r) for r in json.loads(sys.argv[2])]",
          "print(json.dumps([[float(o['reward']), bool(o['done'])] for o in out]))",
        ].join("\n"),
        [JSON.stringify(row("gsm8k_multi_turn", { extra_info: { max_turns: 3 } })), JSON.stringify(replies)],
      ) as [number, boolean][];
      expect(own.map(([, done]) => done)).toEqual([false, true]);
      expect(own[1]![0]).toBe(1);
      expect(steps.map((s) => [s.signals.reward, s.terminated])).toEqual(own);
      expect(outcome).toEqual({ reward: 1, return: own[0]![0] + 1, turns: 2, done: true });
    });

    it("a rows file changed since the plan hashed it is refused at provision, naming it", async () => {
      const planned = planEnv(skyrlGymLibrary, { env_id: "gsm8k" }, { tasks: 1 }, { rows: "gsm8k.jsonl" }, root);
      writeFileSync(
        path.join(root, "gsm8k.jsonl"),
        `${JSON.stringify(row("gsm8k", { reward_spec: { method: "rule", ground_truth: "73" } }))}\n`,
      );
      try {
        const refused = await kind.provision!(planned, {
          name: "math",
          runDir: root,
          log: () => undefined,
          tools: [],
        }).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(EnvError);
        expect((refused as Error).message).toMatch(/gsm8k\.jsonl/);
      } finally {
        writeFileSync(path.join(root, "gsm8k.jsonl"), `${JSON.stringify(row("gsm8k"))}\n`);
      }
    });
  },
);
