// A policy for the gateway's model-half tests: it records what it is asked to encode and
// generate, and answers each call with the next scripted text (the tiny trainer's own encoding
// of it, as if sampled), or with the tiny model's real generation once the script runs out.
import type {
  EncodeOptions,
  GenerateOptions,
  Generation,
  Message,
  Policy,
  TrainerPolicy,
} from "../../src/episode/policy.js";
import type { TinyTrainer } from "../../src/trainer/embedded/trainer.js";

export class RecordingPolicy implements Policy {
  readonly encodes: { messages: Message[]; options: EncodeOptions }[] = [];
  readonly generates: GenerateOptions[] = [];
  private turn = 0;
  constructor(
    private readonly base: { readonly policy: TrainerPolicy; readonly tiny: TinyTrainer },
    private readonly texts: readonly string[] = [],
  ) {}

  encode(
    messages: readonly Message[],
    addGenerationPrompt: boolean,
    options: EncodeOptions = {},
  ): Promise<Int32Array[]> {
    this.encodes.push({ messages: messages.map((m) => ({ ...m })), options });
    return this.base.policy.encode(messages, addGenerationPrompt, options);
  }

  decode(x: Int32Array): Promise<string> {
    return this.base.policy.decode(x);
  }

  tokenize(text: string): Promise<Int32Array> {
    return this.base.policy.tokenize(text);
  }

  async generate(prompt: Int32Array, options: GenerateOptions): Promise<Generation> {
    this.generates.push(options);
    const text = this.texts[this.turn++];
    if (text === undefined) return this.base.policy.generate(prompt, options);
    const body = this.base.tiny.request("encode", {
      messages: [{ role: "assistant", content: text }],
      add_generation_prompt: false,
    }).ids.values;
    return { ids: body.slice(), logprobs: new Float32Array(body.length).fill(-0.5), finish: "stop", policyVersion: 0 };
  }
}
