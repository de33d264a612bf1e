// Which env differences make a task id name another task, on the plans of the checked-in
// real-TextWorld specs: Table 1's sizes are other games, Table 3's turn budgets and the
// listed commands are the same games.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { lowerModel } from "../../src/plan/lower.js";
import type { JsonObject } from "../../src/report/load.js";
import { taskDifferences } from "../../src/report/task-identity.js";

const MINI = fileURLToPath(new URL("../../experiments/mini/", import.meta.url));

function plan(spec: string, variant: string): JsonObject {
  const model = new Compiler().check(`${MINI}${spec}`).model;
  const found = model && lowerModel(model).plans.find((p) => p.variant === variant);
  if (!found) throw new Error(`${spec} has no variant ${variant}`);
  return JSON.parse(JSON.stringify(found.plan)) as JsonObject;
}

describe("taskDifferences", () => {
  it("names the size knobs of Table 1's variants, which are other games", () => {
    const small = plan("textworld-table1-env-complexity.arl", "w2_o3_q4,seed=0");
    const large = plan("textworld-table1-env-complexity.arl", "w8_o12_q4,seed=0");
    expect(taskDifferences(small, large)).toEqual(["env 'quest' objects 3 vs 12, world_size 2 vs 8"]);
  });

  it("finds none between turn budgets, seeds, or the admissible commands shown or not", () => {
    const eight = plan("textworld-table3-listed-commands.arl", "max_turns=8,seed=0");
    expect(taskDifferences(eight, plan("textworld-table3-listed-commands.arl", "max_turns=16,seed=2"))).toEqual([]);
    const free = plan("textworld-table3-turn-budget.arl", "max_turns=8,seed=0");
    expect(taskDifferences(eight, free)).toEqual([]);
  });

  it("counts a field one env has and the other lacks", () => {
    const base = plan("textworld-table1-env-complexity.arl", "w2_o3_q4,seed=0");
    const envs = base.envs as JsonObject;
    const settled = {
      ...base,
      envs: { quest: { ...(envs.quest as JsonObject), challenge_settings: { rewards: "dense" } } },
    };
    expect(taskDifferences(base, settled)).toEqual(["env 'quest' challenge_settings.rewards absent vs \"dense\""]);
  });
});
