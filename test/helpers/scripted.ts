// In-process doubles for harness tests: a character-level policy that replays scripted turns,
// and a small scripted env. Test doubles only; never selectable by users.
import { EnvError, type EnvInstance, type Signals } from "../../src/contracts/env.js";
import type { ToolCall } from "../../src/contracts/tool-calls.js";
import type { PlanTool } from "../../src/plan/schema.js";
import type { GenerateOptions, Generation, Message, Policy } from "../../src/episode/policy.js";

const encodeText = (s: string) => Int32Array.from([...s].map((c) => c.codePointAt(0)!));

export class ScriptedPolicy implements Policy {
  readonly prompts: Int32Array[] = [];
  private turn = 0;

  constructor(
    private readonly turns: readonly string[],
    private readonly finish: "stop" | "length" = "stop",
  ) {}

  async encode(messages: readonly Message[]): Promise<Int32Array[]> {
    return messages.map((m) => encodeText(`<${m.role}>${m.content}`));
  }

  async decode(ids: Int32Array): Promise<string> {
    return String.fromCodePoint(...ids);
  }

  async generate(prompt: Int32Array, options: GenerateOptions): Promise<Generation> {
    this.prompts.push(prompt);
    const text = this.turns[Math.min(this.turn++, this.turns.length - 1)]!;
    const ids = encodeText(text).slice(0, options.maxNewTokens);
    return {
      ids,
      logprobs: new Float32Array(ids.length).fill(-0.1),
      finish: ids.length < text.length ? "length" : this.finish,
      policyVersion: 5,
    };
  }
}

/** Reach the goal by calling `step` `goal` times; `fail_at` makes a step throw an env error. */
export class CounterEnv implements EnvInstance {
  count = 0;
  closed = false;
  constructor(private readonly options: { goal: number; failAt?: number; slowMs?: number; observation?: string }) {}

  async reset() {
    return { text: "count to the goal", signals: { progress: 0 } };
  }

  async step(call: ToolCall) {
    if (this.options.failAt !== undefined && this.count + 1 === this.options.failAt)
      throw new EnvError("server went away", "unavailable");
    if (this.options.slowMs) await new Promise((r) => setTimeout(r, this.options.slowMs));
    if (call.name === "step") this.count++;
    const progress = Math.min(1, this.count / this.options.goal);
    return {
      text: this.options.observation ?? `count=${this.count}`,
      signals: { progress },
      terminated: this.count >= this.options.goal,
    };
  }

  async outcome(): Promise<Signals> {
    return { success: this.count >= this.options.goal };
  }

  async close() {
    this.closed = true;
  }
}

export function planTool(name: string, properties: Record<string, unknown> = {}, timeout_s = 30): PlanTool {
  return {
    name,
    env: "counter",
    timeout_s,
    definition: {
      type: "function",
      function: {
        name,
        description: `the ${name} tool`,
        parameters: {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          properties,
          required: Object.keys(properties),
          additionalProperties: false,
        },
      },
    },
  };
}
