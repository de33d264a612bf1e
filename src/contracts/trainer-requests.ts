// The params of every trainer-protocol request (docs/protocol.md "Messages", version 1) as zod
// schemas: the one schema of the protocol's requests. The embedded trainer parses decoded
// requests with them (trainer/embedded/requests.ts); the build writes their JSON Schema, the
// messages as they are on the wire, to runtime-gpu/arl_trainer/protocol.schema.json, which the
// PyTorch trainer validates with `jsonschema`. docs/protocol.md stays normative: this file follows it.
//
// The schemas check each message's shape, types, enumerations and the bounds both trainers
// share. Facts across fields or against the trainer's state (a layout equal to ids', one seed
// per prompt, token ids inside the vocabulary, denominators that fit the mask) stay in code.
//
// Objects are open: adding an optional field does not bump the protocol version (docs/protocol.md
// "Versioning"), so a trainer accepts fields it does not know. Fields the protocol lists are
// required; `configure.algorithm`'s groups are optional inside, since the trainers default them.
import * as z from "zod";

const TRAINER_REQUESTS_SCHEMA_ID = "urn:arl:trainer-protocol:1:requests";

/** The framing's bulk-array dtypes and the typed arrays they decode to. */
const BULK_ARRAY_TYPES = {
  int32: Int32Array,
  float32: Float32Array,
  float64: Float64Array,
  uint8: Uint8Array,
} as const;
type BulkDtype = keyof typeof BULK_ARRAY_TYPES;

/** Schemas that are bulk arrays, with their dtype: on the wire each is a `{"$array": k}` descriptor. */
const bulkArrays = z.registry<{ dtype: BulkDtype }>();
/** Named schemas (each method's params and the shared parts): the JSON Schema's `$defs`. */
const requestDefinitions = z.registry<{ id: string }>();
const descriptions = new Map<string, string>();

function named<T extends z.ZodType>(id: string, description: string, schema: T): T {
  requestDefinitions.add(schema, { id });
  descriptions.set(id, description);
  return schema;
}

function bulkOf<D extends BulkDtype>(dtype: D) {
  const schema = z.instanceof(BULK_ARRAY_TYPES[dtype], { error: `expected a bulk ${dtype} array` });
  bulkArrays.add(schema, { dtype });
  return named(
    `bulk_${dtype}`,
    `A bulk ${dtype} array: {"$array": k} names the k-th descriptor of the frame's arrays, whose dtype is ${dtype}.`,
    schema,
  );
}

const bulk = { int32: bulkOf("int32"), float32: bulkOf("float32"), float64: bulkOf("float64"), uint8: bulkOf("uint8") };

const raggedOf = <D extends BulkDtype>(dtype: D, description: string) =>
  named(
    `ragged_${dtype}`,
    `${description} A ragged batch: sequence i is values[offsets[i]:offsets[i+1]].`,
    z.looseObject({ values: bulk[dtype], offsets: bulk.int32 }),
  );

const raggedInt32 = raggedOf("int32", "Sequences of token ids.");
const raggedFloat32 = raggedOf("float32", "Per-token float32 values.");
const raggedUint8 = raggedOf("uint8", "Per-token 0/1 flags.");

const nonNegativeInt = z.number().int().nonnegative();

const sampling = named(
  "sampling",
  "The distribution sampled from: logits / temperature (<= 0: greedy), then top-k (0: off), then top-p (1: off).",
  z.looseObject({ temperature: z.number(), top_p: z.number(), top_k: nonNegativeInt }),
);

const klEstimator = z.enum(["k1", "k2", "k3"]);
const klPlacement = z.enum(["loss", "reward", "both"]);

const optimizer = named(
  "optimizer",
  "AdamW settings; an absent field takes the trainer's default. A name other than adamw is 'unsupported'.",
  z.looseObject({
    name: z.string().optional(),
    lr: z.number().positive({ error: "must be positive" }).optional(),
    betas: z.tuple([z.number(), z.number()]).optional(),
    eps: z.number().optional(),
    weight_decay: z.number().optional(),
    grad_clip: z.number().nullable().optional(),
    warmup_steps: nonNegativeInt.optional(),
  }),
);

const clip = named(
  "clip",
  "PPO clip range [1-low, 1+high] and the dual clip c (null: off).",
  z.looseObject({
    low: z.number().min(0).max(1),
    high: z.number().nonnegative(),
    dual: z.number().gt(1).nullable(),
  }),
);

const klReference = z.discriminatedUnion("kind", [
  z.looseObject({ kind: z.literal("initial") }),
  z.looseObject({ kind: z.literal("refresh"), every: z.number().int().positive() }),
]);

const handshake = named(
  "handshake",
  "The first request: the protocol and version the runtime speaks.",
  z.looseObject({
    protocol: z.string(),
    version: z.number().int(),
    runtime: z.looseObject({ name: z.string(), version: z.string() }),
  }),
);

const configure = named(
  "configure",
  "Builds the model, tokenizer, optimizers and weight slots.",
  z.looseObject({
    seed: z.number().int(),
    policy: z.looseObject({
      model: z.string(),
      chat_template: z.string().nullable(),
      sampling: z.looseObject({
        temperature: z.number(),
        top_p: z.number(),
        top_k: nonNegativeInt,
        max_new_tokens: nonNegativeInt,
      }),
      dtype: z.enum(["float32", "bfloat16", "float16"]).optional(),
      lora: z
        .looseObject({
          rank: z.number().int().positive(),
          alpha: z.number().positive(),
          dropout: z.number().min(0).max(1),
          targets: z.array(z.string().min(1)).min(1),
        })
        .nullable()
        .optional(),
    }),
    algorithm: z.looseObject({
      optimizer: optimizer.optional(),
      critic: z
        .looseObject({
          optimizer: optimizer.optional(),
          value_clip: z.number().positive().nullable().optional(),
          init: z.enum(["policy", "random"]).optional(),
        })
        .nullable()
        .optional(),
      clip: clip.optional(),
      kl: z
        .looseObject({
          coef: z.number().nonnegative().optional(),
          estimator: klEstimator.optional(),
          placement: klPlacement.optional(),
          reference: klReference.nullable().optional(),
        })
        .optional(),
    }),
    vocabulary: z.array(z.string()).nullable(),
    behaviour_policy: z.boolean().optional(),
    options: z.looseObject({}).optional(),
  }),
);

const toolCall = z.looseObject({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()) });

const encode = named(
  "encode",
  "Chat messages to token ids through the chat template, one sequence per message from `context` on.",
  z.looseObject({
    messages: z.array(
      z.looseObject({
        role: z.enum(["system", "user", "tool", "assistant"]),
        content: z.string(),
        tool_calls: z.array(toolCall).optional(),
      }),
    ),
    add_generation_prompt: z.boolean(),
    tools: z
      .array(z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: z.string().min(1) }) }))
      .nullable()
      .optional(),
    context: nonNegativeInt.optional(),
  }),
);

const decode = named("decode", "Token ids to texts.", z.looseObject({ ids: raggedInt32 }));

const tokenize = named(
  "tokenize",
  "Plain texts to token ids, without the chat template; special-token text is its token.",
  z.looseObject({ texts: z.array(z.string()) }),
);

const generate = named(
  "generate",
  "Samples continuations of the prompts; prompt i draws from its own stream seeded by seeds[i].",
  z.looseObject({
    prompts: raggedInt32,
    max_new_tokens: nonNegativeInt,
    temperature: z.number(),
    top_p: z.number(),
    top_k: nonNegativeInt,
    stop_ids: z.array(z.number().int()),
    seeds: bulk.int32,
    policy: z.enum(["current", "behaviour"]),
  }),
);

const logprobs = named(
  "logprobs",
  "log p(ids[k] | ids[:k]) under a weight slot; `mask` marks the positions the caller reads.",
  z.looseObject({
    ids: raggedInt32,
    policy: z.enum(["current", "reference", "behaviour"]),
    sampling: sampling.nullable(),
    mask: raggedUint8.nullable().optional(),
  }),
);

const values = named("values", "The critic's V(h_k) per position.", z.looseObject({ ids: raggedInt32 }));

const reduction = named(
  "reduction",
  "How token contributions are reduced over the whole step's denominators.",
  z.discriminatedUnion(
    "mode",
    [
      z.looseObject({ mode: z.literal("token_mean") }),
      z.looseObject({ mode: z.literal("seq_mean_token_mean") }),
      z.looseObject({ mode: z.literal("seq_mean_token_sum") }),
      z.looseObject({ mode: z.literal("group_token_mean") }),
      z.looseObject({
        mode: z.literal("constant"),
        constant: z.number().positive({ error: "reduction 'constant' needs a positive constant" }),
      }),
    ],
    {
      error:
        "unknown reduction (known: token_mean, seq_mean_token_mean, seq_mean_token_sum, constant, group_token_mean)",
    },
  ),
);

const lrError = (issue: { input?: unknown }) =>
  `lr must be a positive finite number or null, got ${JSON.stringify(issue.input)}`;

const trainStep = named(
  "train_step",
  "One optimizer step over the batch, each microbatch divided by the whole step's denominators.",
  z.looseObject({
    ids: raggedInt32,
    loss_mask: raggedUint8,
    advantages: raggedFloat32,
    old_logprobs: raggedFloat32.nullable(),
    ref_logprobs: raggedFloat32.nullable(),
    groups: bulk.int32,
    reduction,
    denominators: z.looseObject({
      tokens: z.number(),
      sequences: z.number(),
      groups: z.number(),
      group_tokens: bulk.float64,
      sequence_tokens: bulk.float64,
    }),
    microbatches: z.number().int().positive(),
    clip,
    kl: z.looseObject({ coef: z.number().nonnegative(), estimator: klEstimator, placement: klPlacement }),
    sampling: sampling.nullable(),
    critic: z
      .looseObject({ returns: raggedFloat32, old_values: raggedFloat32, value_clip: z.number().positive().nullable() })
      .nullable(),
    lr: z.number({ error: lrError }).positive({ error: lrError }).nullable().optional(),
    is_weights: raggedFloat32.nullable().optional(),
  }),
);

const empty = (id: string, description: string) => named(id, description, z.looseObject({}));
const path = (id: string, description: string) =>
  named(id, description, z.looseObject({ path: z.string().min(1, { error: `${id} needs a path` }) }));

/** The params schema of every method, by method name. */
export const requestParams = {
  handshake,
  configure,
  encode,
  decode,
  tokenize,
  generate,
  logprobs,
  values,
  train_step: trainStep,
  snapshot: empty("snapshot", "Copies the current weights into the behaviour slot."),
  reset_optimizer: empty(
    "reset_optimizer",
    "Starts the optimizers afresh: moments zeroed, step count 0; the weights are kept.",
  ),
  save: named(
    "save",
    "Writes a checkpoint directory (atomically); with policy_only, the policy's own files alone (for an inference server's weight sync); with background, the trainer may answer before the files are durable (then `saved` says how it went).",
    z.looseObject({
      path: z.string().min(1, { error: "save needs a path" }),
      policy_only: z.boolean().optional(),
      background: z.boolean().optional(),
    }),
  ),
  saved: empty(
    "saved",
    "Waits for the background save still outstanding and answers its folder and files, or its failure.",
  ),
  load: path("load", "Restores a checkpoint directory."),
  eval_op: named(
    "eval_op",
    "A conformance op (test/conformance) computed by the trainer.",
    z.looseObject({ op: z.string(), input: z.unknown() }),
  ),
  shutdown: empty("shutdown", "Ends the session; the trainer exits with status 0."),
} as const;

export type RequestMethod = keyof typeof requestParams;

export const REQUEST_METHODS = Object.keys(requestParams) as RequestMethod[];

/** The wire form of a bulk array: the index of its descriptor in the frame's `arrays`. */
function bulkDescriptor(dtype: BulkDtype): Record<string, unknown> {
  return {
    type: "object",
    properties: { $array: { type: "integer", minimum: 0 } },
    required: ["$array"],
    additionalProperties: false,
    "x-dtype": dtype,
  };
}

/**
 * The JSON Schema (draft 2020-12) of a request frame's message `{"id", "method", "params"}`, as
 * on the wire: each method's params are `$defs/<method>`, selected by `method`.
 */
export function trainerRequestsJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(requestDefinitions, {
    target: "draft-2020-12",
    uri: (id) => `#/$defs/${id}`,
    unrepresentable: "any",
    override: (ctx) => {
      const marked = bulkArrays.get(ctx.zodSchema);
      if (!marked) return;
      for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as Record<string, unknown>)[key];
      Object.assign(ctx.jsonSchema, bulkDescriptor(marked.dtype));
    },
  }) as { schemas: Record<string, Record<string, unknown>> };
  const defs: Record<string, unknown> = {};
  for (const [id, schema] of Object.entries(generated.schemas).sort(([a], [b]) => a.localeCompare(b))) {
    // A `$id` with a fragment is not allowed in draft 2020-12: the defs are reached by pointer.
    const { $schema: _schema, $id: _id, ...rest } = schema;
    defs[id] = { description: descriptions.get(id), ...rest };
  }
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: TRAINER_REQUESTS_SCHEMA_ID,
    title: "ARL trainer protocol, version 1: requests",
    description:
      "Generated from src/contracts/trainer-requests.ts by `npm run build`; do not edit. A request frame's message, with bulk arrays as {\"$array\": k} descriptors (docs/protocol.md, Framing). Dtype and length checks of the decoded arrays stay in the trainers' code.",
    type: "object",
    properties: {
      id: { type: "integer", minimum: 0 },
      method: { enum: REQUEST_METHODS },
      params: { type: "object" },
    },
    required: ["id", "method", "params"],
    allOf: REQUEST_METHODS.map((method) => ({
      if: { properties: { method: { const: method } }, required: ["method"] },
      then: { properties: { params: { $ref: `#/$defs/${method}` } } },
    })),
    $defs: defs,
  };
}
