// Train/valid/test splits by task: a seeded permutation of the task ids cut by the plan's
// fractions, so splits are disjoint and every machine computes the same ones.
import { createHash } from "node:crypto";
import { at } from "../contracts/checked.js";
import type { PlanEnv } from "./schema.js";

export type Split = "train" | "valid" | "test";

/** A permutation that depends only on the env's name and version, never on the run's seed. */
function permutation(n: number, key: string): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  const rank = (i: number) => createHash("sha256").update(`${key}:${i}`).digest().readUInt32BE(0);
  const ranks = order.map(rank);
  return order.sort((a, b) => at(ranks, a) - at(ranks, b) || a - b);
}

/** How many tasks each split holds: each fraction of the task count, rounded down. */
export function splitSizes(env: Pick<PlanEnv, "tasks" | "split">): Record<Split, number> {
  return {
    train: Math.floor(env.tasks * env.split.train),
    valid: Math.floor(env.tasks * env.split.valid),
    test: Math.floor(env.tasks * env.split.test),
  };
}

export function splitTasks(name: string, env: PlanEnv, split: Split): number[] {
  const ids = permutation(env.tasks, `${name}@${env.version}`);
  const { train, valid, test } = splitSizes(env);
  const ranges: Record<Split, [number, number]> = { train: [0, train], valid: [train, train + valid], test: [train + valid, train + valid + test] };
  const [from, to] = ranges[split];
  return ids.slice(from, to).sort((a, b) => a - b);
}
