// What the built-in findmax env's tests (findmax.test.ts, findmax-sandbox.test.ts) share: an env
// with test settings, episodes opened and closed around a body, and tool steps.
import { type EnvInstance, type StepResult } from "../../src/contracts/env.js";
import { findmaxEnv, type FindmaxEnv, type FindmaxInstance } from "../../src/envs/worlds/findmax/index.js";

export function makeEnv(overrides: Partial<FindmaxEnv> = {}): FindmaxEnv {
  return {
    kind: "findmax",
    description: null,
    version: "1",
    tasks: 400,
    split: { train: 0.8, valid: 0, test: 0.2 },
    weight: 1,
    signals: {},
    optimal_steps: 3,
    budget_is_task_rule: false,
    reward_range: [0, 1],
    functions: ["find_max", "find_min", "sum", "index_of"],
    visible_tests: 3,
    hidden_tests: 8,
    time_limit_ms: 2000,
    memory_limit_mb: 128,
    require_namespaces: true,
    ...overrides,
  };
}

export async function open(env: FindmaxEnv, task: number): Promise<FindmaxInstance> {
  const inst = (await findmaxEnv.create(env, task, 0)) as FindmaxInstance;
  await inst.reset();
  return inst;
}

/** Opens an episode, runs `body`, always closes it. */
export async function episode<T>(
  env: FindmaxEnv,
  task: number,
  body: (inst: FindmaxInstance) => Promise<T>,
): Promise<T> {
  const inst = await open(env, task);
  try {
    return await body(inst);
  } finally {
    await inst.close();
  }
}

export const step = (inst: EnvInstance, name: string, args: Record<string, unknown> = {}): Promise<StepResult> =>
  inst.step({ name, arguments: args });
