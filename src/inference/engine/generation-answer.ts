// What both wires conclude from a parsed generation once they know the request it answers:
// the trainer protocol's conventions that the engines do not follow themselves.

import { type EngineGenerateArgs, type EngineGeneration } from "./contract.js";
import { adapterVersion } from "./lora-adapters.js";
import { type AnswerReader } from "./wire-read.js";

/** A generation as read from the answer, before the request's conventions are applied. */
export interface ParsedGeneration extends EngineGeneration {
  /** The answer's path of the ids, for error messages. */
  readonly idsPath: string;
}

export function applyRequest(
  reader: AnswerReader,
  parsed: ParsedGeneration,
  request: EngineGenerateArgs | undefined,
): EngineGeneration {
  const { idsPath, ...generation } = parsed;
  if (request === undefined) return generation;
  if (generation.ids.length > request.maxNewTokens) {
    reader.fail(`${idsPath}.length`, generation.ids.length, `at most max_new_tokens = ${request.maxNewTokens} ids`);
  }
  // docs/protocol.md `generate`: temperature 0 is argmax with log-prob 0 (a point mass); the
  // engines report the argmax token's log-softmax instead.
  const logprobs = request.temperature === 0 ? new Float32Array(generation.ids.length) : generation.logprobs;
  const adapter = adapterVersion(request.model);
  const weightVersion = adapter === null ? generation.weightVersion : String(adapter);
  return { ...generation, logprobs, weightVersion };
}
