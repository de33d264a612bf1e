import * as z from "zod";
import { doc, positiveInt, probability } from "./common.js";

export const samplingSchema = z.strictObject({
  temperature: doc(z.number().nonnegative().default(1.0), "Softmax temperature; 0 is greedy decoding."),
  top_p: doc(probability.default(1.0), "Nucleus sampling: keep the smallest set of tokens whose probability reaches top_p (1 = off)."),
  top_k: doc(z.number().int().nonnegative().default(0), "Keep the k most likely tokens (0 = off)."),
  max_new_tokens: doc(positiveInt.default(512), "Most tokens generated in one turn."),
});

export const policySchema = z.strictObject({
  model: doc(
    z.string().min(1),
    'The policy model: "builtin:tiny" for the embedded CPU model, "hf:ORG/NAME" or a local path for the GPU trainer.',
  ),
  chat_template: doc(z.string().nullable().default(null), "Chat template override; none uses the model's own."),
  sampling: doc(samplingSchema.default(samplingSchema.parse({})), "How rollouts sample tokens."),
});

export type Policy = z.output<typeof policySchema>;
