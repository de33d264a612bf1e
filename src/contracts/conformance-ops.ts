// The conformance ops: for each, the schema of its input and expected output in the vector
// format (test/conformance/*.json, shared with every trainer). The reference value of each op is
// src/rl/reference-ops.ts; a trainer computes its own through `eval_op`.
import * as z from "zod";

const num = z.number();
const vector = z.array(num);
const matrix = z.array(vector);
const bit = z.union([z.literal(0), z.literal(1)], { error: "expected 0 or 1" });
const probability = num.min(0).max(1);

type Ctx = z.RefinementCtx;

function sameLength(
  ctx: Ctx,
  a: readonly unknown[],
  b: readonly unknown[],
  path: (string | number)[],
  what: string,
): void {
  if (a.length !== b.length)
    ctx.addIssue({ code: "custom", path, message: `${what}: has ${b.length} entries, expected ${a.length}` });
}

const advantagesInput = z.strictObject({
  rewards: z.array(vector.min(1, "a group needs at least one reward")),
  baseline: z.enum(["mean", "leave_one_out", "none"]),
  normalize: z.enum(["std", "none"]),
});

const taskNormalizeInput = z
  .strictObject({ advantages: vector, tasks: z.array(z.string()) })
  .superRefine((v, ctx) => sameLength(ctx, v.advantages, v.tasks, ["tasks"], "one task per advantage"));

const gaeInput = z
  .strictObject({
    rewards: vector,
    values: vector,
    gamma: probability,
    lambda: probability,
    end: z.enum(["terminated", "truncated"]),
    bootstrap_value: num.optional(),
  })
  .superRefine((v, ctx) => {
    sameLength(ctx, v.rewards, v.values, ["values"], "one value per reward");
    if (v.end === "truncated" && v.bootstrap_value === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["bootstrap_value"],
        message: "a truncated episode needs bootstrap_value (V(h_T))",
      });
  });

const reductionInput = z.discriminatedUnion("mode", [
  z.strictObject({ mode: z.literal("token_mean") }),
  z.strictObject({ mode: z.literal("seq_mean_token_mean") }),
  z.strictObject({ mode: z.literal("seq_mean_token_sum") }),
  z.strictObject({ mode: z.literal("group_token_mean") }),
  z.strictObject({ mode: z.literal("constant"), constant: num.positive() }),
]);

const policyLossInput = z
  .strictObject({
    logp: matrix,
    logp_old: matrix,
    mask: z.array(z.array(bit)),
    advantages: z.union([vector, matrix], { error: "expected one number per sequence or one array per sequence" }),
    clip: z.strictObject({ low: num.min(0).max(1), high: num.min(0), dual: num.gt(1).nullable() }),
    reduction: reductionInput,
    groups: z.array(z.string()).optional(),
    microbatches: z.array(z.array(z.number().int().min(0))).optional(),
    is_weights: z.array(z.array(num.min(0))).optional(),
  })
  .superRefine((v, ctx) => {
    const N = v.logp.length;
    sameLength(ctx, v.logp, v.logp_old, ["logp_old"], "one row per sequence of logp");
    sameLength(ctx, v.logp, v.mask, ["mask"], "one row per sequence of logp");
    sameLength(ctx, v.logp, v.advantages, ["advantages"], "one entry per sequence of logp");
    v.logp.forEach((row, i) => {
      if (v.logp_old[i] && v.logp_old[i].length !== row.length)
        ctx.addIssue({
          code: "custom",
          path: ["logp_old", i],
          message: `has ${v.logp_old[i].length} tokens, logp[${i}] has ${row.length}`,
        });
      if (v.mask[i] && v.mask[i].length !== row.length)
        ctx.addIssue({
          code: "custom",
          path: ["mask", i],
          message: `has ${v.mask[i].length} tokens, logp[${i}] has ${row.length}`,
        });
      const a = v.advantages[i];
      if (Array.isArray(a) && a.length !== row.length)
        ctx.addIssue({
          code: "custom",
          path: ["advantages", i],
          message: `has ${a.length} tokens, logp[${i}] has ${row.length}`,
        });
      const w = v.is_weights?.[i];
      if (w && w.length !== row.length)
        ctx.addIssue({
          code: "custom",
          path: ["is_weights", i],
          message: `has ${w.length} tokens, logp[${i}] has ${row.length}`,
        });
    });
    if (v.is_weights) sameLength(ctx, v.logp, v.is_weights, ["is_weights"], "one row per sequence of logp");
    if (v.groups) sameLength(ctx, v.logp, v.groups, ["groups"], "one group per sequence");
    else if (v.reduction.mode === "group_token_mean")
      ctx.addIssue({ code: "custom", path: ["groups"], message: "group_token_mean needs the group of every sequence" });
    if (v.microbatches) {
      const seen = new Array<number>(N).fill(0);
      v.microbatches.forEach((mb, b) =>
        mb.forEach((i, j) => {
          if (i >= N)
            ctx.addIssue({
              code: "custom",
              path: ["microbatches", b, j],
              message: `sequence ${i} does not exist (the batch has ${N})`,
            });
          else seen[i] = (seen[i] as number) + 1;
        }),
      );
      seen.forEach((c, i) => {
        if (c !== 1)
          ctx.addIssue({
            code: "custom",
            path: ["microbatches"],
            message: `not a partition of the sequences: sequence ${i} appears ${c} times`,
          });
      });
    }
  });

const klInput = z
  .strictObject({ logp: vector, logp_ref: vector, estimator: z.enum(["k1", "k2", "k3"]) })
  .superRefine((v, ctx) => sameLength(ctx, v.logp, v.logp_ref, ["logp_ref"], "one reference log-prob per token"));

/** Trainer and engine log-probs of one batch's tokens, with its target mask (docs/semantics.md §12). */
const mismatchBatch = {
  logp_old: matrix,
  logp_engine: matrix,
  mask: z.array(z.array(bit)),
};

function sameBatchShape(v: { logp_old: number[][]; logp_engine: number[][]; mask: number[][] }, ctx: Ctx): void {
  sameLength(ctx, v.mask, v.logp_old, ["logp_old"], "one row per sequence of mask");
  sameLength(ctx, v.mask, v.logp_engine, ["logp_engine"], "one row per sequence of mask");
  v.mask.forEach((m, i) => {
    for (const key of ["logp_old", "logp_engine"] as const) {
      const r = v[key][i];
      if (r && r.length !== m.length)
        ctx.addIssue({ code: "custom", path: [key, i], message: `has ${r.length} tokens, mask[${i}] has ${m.length}` });
    }
  });
}

const mismatchInput = z.strictObject({ ...mismatchBatch, threshold: num.positive() }).superRefine(sameBatchShape);
const tisWeightsInput = z
  .strictObject({ ...mismatchBatch, cap: num.gt(1), level: z.enum(["token", "sequence"]) })
  .superRefine(sameBatchShape);

const passAtKInput = z
  .strictObject({ n: z.number().int().min(1), c: z.number().int().min(0), k: z.number().int().min(1) })
  .superRefine((v, ctx) => {
    if (v.c > v.n) ctx.addIssue({ code: "custom", path: ["c"], message: `c (${v.c}) exceeds n (${v.n})` });
    if (v.k > v.n)
      ctx.addIssue({
        code: "custom",
        path: ["k"],
        message: `k (${v.k}) exceeds n (${v.n}); the estimator needs n >= k`,
      });
  });

const mixedGroupInput = z.strictObject({ p: probability, group_size: z.number().int().min(1) });

export interface OpSchema {
  readonly input: z.ZodType;
  readonly expected: z.ZodType;
}

export const opSchemas = {
  advantages: { input: advantagesInput, expected: matrix },
  task_normalize: { input: taskNormalizeInput, expected: vector },
  gae: { input: gaeInput, expected: vector },
  policy_loss: { input: policyLossInput, expected: z.strictObject({ loss: num }) },
  kl: { input: klInput, expected: vector },
  mismatch: {
    input: mismatchInput,
    expected: z.strictObject({ mean_abs: num, max_abs: num, frac_over: num, tokens: num }),
  },
  tis_weights: { input: tisWeightsInput, expected: matrix },
  pass_at_k: { input: passAtKInput, expected: num },
  mixed_group_probability: { input: mixedGroupInput, expected: num },
} as const satisfies Record<string, OpSchema>;

export type OpName = keyof typeof opSchemas;
export const opNames = Object.keys(opSchemas) as OpName[];

export function isOpName(name: string): name is OpName {
  return Object.hasOwn(opSchemas, name);
}

/** An op's input as its schema parses it. */
export type OpInput<K extends OpName> = z.output<(typeof opSchemas)[K]["input"]>;
