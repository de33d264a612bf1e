// Train/valid/test splits by task: a seeded permutation of the task ids cut by the plan's
// fractions, so splits are disjoint and every machine computes the same ones. A dataset whose
// rows name their own split carries the splits in the plan (task-id ranges read at compile time).
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

/** The task ids of a split a dataset's rows name themselves; undefined for splits cut by fractions. */
function rowSplit(env: PlanEnv, split: Split): number[] | undefined {
  if (env.kind !== "dataset" || env.split_column === null) return undefined;
  return env.split_column[split].flatMap(([from, to]) => Array.from({ length: to - from }, (_, i) => from + i));
}

/** How many tasks each split holds: each fraction of the task count, rounded down (or the rows' own split). */
export function splitSizes(env: PlanEnv): Record<Split, number> {
  if (env.kind === "dataset" && env.split_column !== null) {
    const size = (split: Split) => (env.split_column?.[split] ?? []).reduce((n, [from, to]) => n + to - from, 0);
    return { train: size("train"), valid: size("valid"), test: size("test") };
  }
  return {
    train: Math.floor(env.tasks * env.split.train),
    valid: Math.floor(env.tasks * env.split.valid),
    test: Math.floor(env.tasks * env.split.test),
  };
}

export function splitTasks(name: string, env: PlanEnv, split: Split): number[] {
  const own = rowSplit(env, split);
  if (own) return own;
  const ids = permutation(env.tasks, `${name}@${env.version}`);
  const { train, valid, test } = splitSizes(env);
  const ranges: Record<Split, [number, number]> = {
    train: [0, train],
    valid: [train, train + valid],
    test: [train + valid, train + valid + test],
  };
  const [from, to] = ranges[split];
  return ids.slice(from, to).sort((a, b) => a - b);
}
