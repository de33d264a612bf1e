// The policy as the harness sees it when an inference engine samples (docs/engines.md): the
// trainer stays the only tokenizer (encode and decode go to it), generations go to the servers
// through the pool, and each comes back with the ids and log-probs the engine returned and the
// policy version the servers were last synced to (the weights that generated it).
import type { EncodeOptions, GenerateOptions, Generation, Message, Policy } from "../../episode/policy.js";
import type { EnginePool } from "./pool.js";

export class EnginePolicy implements Policy {
  constructor(
    /** The trainer's policy, for its tokenizer. */
    private readonly tokenizer: Required<Pick<Policy, "encode" | "decode" | "decodeEach" | "tokenize">>,
    private readonly pool: EnginePool,
  ) {}

  encode(messages: readonly Message[], addGenerationPrompt: boolean, options?: EncodeOptions): Promise<Int32Array[]> {
    return this.tokenizer.encode(messages, addGenerationPrompt, options);
  }

  decode(ids: Int32Array): Promise<string> {
    return this.tokenizer.decode(ids);
  }

  decodeEach(ids: Int32Array): Promise<string[]> {
    return this.tokenizer.decodeEach(ids);
  }

  tokenize(text: string): Promise<Int32Array> {
    return this.tokenizer.tokenize(text);
  }

  async generate(prompt: Int32Array, options: GenerateOptions): Promise<Generation> {
    const generation = await this.pool.generate({
      prompt,
      maxNewTokens: options.maxNewTokens,
      temperature: options.temperature,
      topP: options.topP,
      topK: options.topK,
      stopIds: options.stopIds,
      seed: options.seed,
    });
    return {
      ids: generation.ids,
      logprobs: generation.logprobs,
      finish: generation.finish,
      policyVersion: generation.version,
    };
  }
}
