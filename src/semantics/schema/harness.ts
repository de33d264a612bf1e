import * as z from "zod";
import { doc, enumOf, positiveInt, reference } from "./common.js";

const observationSchema = z.strictObject({
  max_tokens: doc(positiveInt.default(1024), "Most tokens of one observation kept in the context."),
  overflow: doc(
    enumOf(["keep_head", "keep_tail", "keep_head_tail", "error"]).default("keep_head"),
    "What to keep of a longer observation; `error` ends the episode as an env error.",
  ),
});

const contextSchema = z.strictObject({
  history: doc(
    enumOf(["exact", "rerender"]).default("exact"),
    "How the conversation reaches the model: `exact` appends each turn's tokens (what was sampled is what is trained, one sample per episode); `rerender` renders the whole conversation with the chat template before every model call and trains each call as its own sample (docs/semantics.md §10).",
  ),
});

export const harnessSchema = z.strictObject({
  tools: doc(
    z
      .union([z.array(reference), reference])
      .nullable()
      .default(null),
    "Tools offered to the model: a list (`[code.run_tests, my_tool]`) or an env's whole set (`bank.tools`); none: each env brings its own.",
  ),
  format: doc(enumOf(["function_call", "text_action"]).default("function_call"), "How the model writes tool calls."),
  system_prompt: doc(z.string().nullable().default(null), "System text placed before the task."),
  max_turns: doc(positiveInt.default(10), "Most model turns in one episode."),
  max_response_tokens: doc(
    positiveInt.default(1024),
    "Token budget of one turn: a turn that reaches it is cut and the episode counts as aborted (episode.aborted).",
  ),
  max_total_tokens: doc(
    positiveInt.nullable().default(null),
    "Most tokens in the whole context; none: no limit beyond the model's context (which bounds every agent request too).",
  ),
  on_budget: doc(
    enumOf(["truncate", "terminate"]).default("truncate"),
    "When a budget runs out: `truncate` stops collection (values bootstrap), `terminate` treats it as the task's end.",
  ),
  observation: doc(observationSchema.default(observationSchema.parse({})), "Limits on tool output in the context."),
  tool_timeout_s: doc(z.number().positive().default(30), "Default time limit of a tool call."),
  context: doc(
    contextSchema.default(contextSchema.parse({})),
    "How the conversation's history is given to the model at each call.",
  ),
});
