// The harness on a chat template: the conversation kept as messages, each new message encoded as
// the template continues it (encode's `context`), tools rendered by the template where it can,
// the template family's call format, and `harness.context { history }`: exact appends tokens
// (one sample per episode), rerender renders the conversation again before every call and keeps
// each call as its own sample. The template double drops earlier turns' <think> blocks, as
// Qwen3's does, so the two histories differ.
import { describe, expect, it } from "vitest";
import type { ChatTemplateInfo } from "../../src/contracts/trainer-protocol.js";
import { ToolCallValidator } from "../../src/contracts/tool-calls.js";
import type { Plan } from "../../src/plan/schema.js";
import { computeAdvantages, computeStepwiseAdvantages, type ScoredTrajectory } from "../../src/runtime/advantage.js";
import { Role } from "../../src/episode/buffer.js";
import { runEpisode, type Episode } from "../../src/episode/harness.js";
import type { EncodeOptions, GenerateOptions, Generation, Message, Policy } from "../../src/episode/policy.js";
import { compilePlans, counterSpec } from "../helpers/plans.js";
import { CounterEnv } from "../helpers/scripted.js";

const MARK = { system: 1001, user: 1002, tool: 1003, assistant: 1004, end: 1005, call: 1006, tools: 1007 } as const;
const MARKS = new Set<number>(Object.values(MARK));
const chars = (s: string) => [...s].map((c) => c.codePointAt(0)!);

/** A character-level policy behind a chat template that drops the <think> blocks of earlier assistant turns. */
class TemplatePolicy implements Policy {
  readonly encodes: { messages: Message[]; options: EncodeOptions }[] = [];
  readonly prompts: Int32Array[] = [];
  private turn = 0;
  constructor(private readonly turns: readonly string[]) {}

  async encode(
    messages: readonly Message[],
    addGenerationPrompt: boolean,
    options: EncodeOptions = {},
  ): Promise<Int32Array[]> {
    this.encodes.push({ messages: messages.map((m) => ({ ...m })), options });
    const rows = messages.map((m, i) => {
      const head = m.role === "assistant" ? [] : [MARK[m.role]];
      const content = m.role === "assistant" ? m.content.replace(/<think>[\s\S]*?<\/think>/g, "") : m.content;
      const calls = (m.tool_calls ?? []).flatMap((c) => [
        MARK.call,
        ...chars(`${c.name}${JSON.stringify(c.arguments)}`),
      ]);
      const next = messages[i + 1];
      const prompt = next?.role === "assistant" || (!next && addGenerationPrompt) ? [MARK.assistant] : [];
      const tools =
        i === 0 && options.tools
          ? [
              MARK.tools,
              ...chars(options.tools.map((t) => (t as { function: { name: string } }).function.name).join(",")),
            ]
          : [];
      return Int32Array.from([...tools, ...head, ...chars(content), ...calls, MARK.end, ...prompt]);
    });
    return rows.slice(options.context ?? 0);
  }

  async decode(ids: Int32Array): Promise<string> {
    return String.fromCodePoint(...Array.from(ids).filter((id) => !MARKS.has(id)));
  }

  async generate(prompt: Int32Array, _options: GenerateOptions): Promise<Generation> {
    this.prompts.push(prompt);
    const text = this.turns[Math.min(this.turn++, this.turns.length - 1)]!;
    const ids = Int32Array.from([...chars(text), MARK.end]);
    return { ids, logprobs: new Float32Array(ids.length).fill(-0.2), finish: "stop", policyVersion: 7 };
  }
}

const hermes = (name: string) => `<tool_call>{"name": "${name}", "arguments": {}}</tool_call>`;
const template = (t: Partial<ChatTemplateInfo> = {}): ChatTemplateInfo => ({
  prefix_preserving: false,
  renders_tools: false,
  tool_call_format: "hermes",
  tool_role: "tool",
  ...t,
});

function plan(history: "exact" | "rerender"): Plan {
  return compilePlans(
    counterSpec(`harness { max_turns: 4, system_prompt: "Count.", context { history: ${history} } }`),
  )[0]!;
}

async function play(p: Plan, policy: TemplatePolicy, goal: number, t: ChatTemplateInfo = template()): Promise<Episode> {
  return runEpisode({
    plan: p,
    envName: "counter",
    env: new CounterEnv({ goal }),
    policy,
    tools: p.tools,
    validator: new ToolCallValidator(),
    stopIds: [MARK.end],
    seed: (n) => n,
    template: t,
  });
}

const turns = [`<think>first</think>${hermes("step")}`, `<think>second</think>${hermes("step")}`];

describe("history exact", () => {
  it("keeps the conversation as messages and appends only what each new message adds after the generated turn", async () => {
    const policy = new TemplatePolicy(turns);
    const ep = await play(plan("exact"), policy, 2);
    expect(ep.episode).toMatchObject({ turns: 2, tool_calls: 2, invalid_calls: 0, terminated: true });
    // The observation after turn 1 was encoded with the 3 messages before it as context.
    const obs = policy.encodes[1]!;
    expect(obs.options.context).toBe(3);
    expect(obs.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(obs.messages[2]).toEqual({
      role: "assistant",
      content: "<think>first</think>",
      tool_calls: [{ name: "step", arguments: {} }],
    });
    // The second prompt extends the first with the generated ids as sampled (<think> kept).
    const [first, second] = policy.prompts;
    expect(Array.from(second!.subarray(0, first!.length))).toEqual(Array.from(first!));
    expect(String.fromCodePoint(...Array.from(second!).filter((x) => x < 1000))).toContain("<think>first</think>");
    expect(ep.samples).toHaveLength(1);
    expect(ep.samples[0]!.ids).toEqual(ep.ids);
    expect(ep.samples[0]!.turnEnds).toEqual(ep.turnEnds);
  });

  it("lets a template that renders tools show them, instead of describing them in the system prompt", async () => {
    const described = new TemplatePolicy(turns);
    await play(plan("exact"), described, 1);
    expect(described.encodes[0]!.messages[0]!.content).toContain("Tools:");
    expect(described.encodes[0]!.options.tools).toBeUndefined();

    const rendered = new TemplatePolicy(turns);
    await play(plan("exact"), rendered, 1, template({ renders_tools: true }));
    expect(rendered.encodes[0]!.messages[0]).toEqual({ role: "system", content: "Count." });
    expect(
      (rendered.encodes[0]!.options.tools as { function: { name: string } }[]).map((t) => t.function.name),
    ).toEqual(["step", "write"]);
  });

  it("reads calls in the template's format, and a malformed one is a counted error observation", async () => {
    const policy = new TemplatePolicy(['{"name": "step", "parameters": {}}', '{"name": "step", "parameters": ']);
    const ep = await play(plan("exact"), policy, 2, template({ tool_call_format: "llama3_json" }));
    expect(ep.toolCalls.map((c) => [c.name, c.valid, c.result])).toEqual([
      ["step", true, "count=1"],
      ["", false, "Error: the tool call is not complete JSON."],
      ["", false, "Error: the tool call is not complete JSON."],
      ["", false, "Error: the tool call is not complete JSON."],
    ]);
    expect(ep.episode).toMatchObject({ tool_calls: 1, invalid_calls: 3, truncated: true });
  });
  it("reads DeepSeek-V3 call blocks, keeping the text before the block as the turn's content", async () => {
    const block =
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>step\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    const policy = new TemplatePolicy([`One step. ${block}`]);
    const ep = await play(plan("exact"), policy, 2, template({ tool_call_format: "deepseek_v3" }));
    expect(ep.episode).toMatchObject({ tool_calls: 2, invalid_calls: 0, terminated: true });
    expect(ep.toolCalls[0]).toMatchObject({ name: "step", valid: true });
    expect(policy.encodes[1]!.messages[2]).toEqual({
      role: "assistant",
      content: "One step.",
      tool_calls: [{ name: "step", arguments: {} }],
    });
  });
});

describe("history rerender", () => {
  it("renders the whole conversation before every call and keeps each call as its own sample", async () => {
    const policy = new TemplatePolicy(turns);
    const ep = await play(plan("rerender"), policy, 2);
    expect(ep.samples.map((s) => s.step)).toEqual([0, 1]);
    // The second call sees the template's rendering: the first turn's <think> is gone.
    const second = policy.prompts[1]!;
    const text = String.fromCodePoint(...Array.from(second).filter((x) => x < 1000));
    expect(text).not.toContain("<think>");
    expect(policy.encodes.some((e) => (e.options.context ?? 0) === 0 && e.messages.length === 4)).toBe(true);
    for (const [s, sample] of ep.samples.entries()) {
      const prompt = policy.prompts[s]!;
      expect(Array.from(sample.ids.subarray(0, prompt.length))).toEqual(Array.from(prompt));
      const generated = [...sample.roles].map((r, k) => (r === Role.generated ? k : -1)).filter((k) => k >= 0);
      expect(generated[0]).toBe(prompt.length);
      expect(generated.length).toBe(sample.ids.length - prompt.length);
      for (let k = 0; k < sample.ids.length; k++) {
        expect(sample.versions[k]).toBe(k >= prompt.length ? 7 : -1);
        expect(sample.logprobs[k]).toBeCloseTo(k >= prompt.length ? -0.2 : 0, 6);
      }
      expect(sample.turnEnds).toEqual([sample.ids.length - 1]);
    }
    // The earlier turn re-rendered from its text is context only (never a target).
    expect(ep.samples[1]!.roles.includes(Role.rendered)).toBe(true);
    expect(ep.samples[0]!.roles.includes(Role.rendered)).toBe(false);
    // The appended stream is still kept, with the turn as sampled.
    expect(String.fromCodePoint(...Array.from(ep.ids).filter((x) => x < 1000))).toContain("<think>first</think>");
  });
});

describe("step-wise advantages", () => {
  /** A call's sequence: `prompt` context tokens, then `generated` sampled ones. */
  const call = (prompt: number, generated: number, values?: number[]): ScoredTrajectory => {
    const roles = Uint8Array.from([
      ...Array<number>(prompt).fill(Role.prompt),
      ...Array<number>(generated).fill(Role.generated),
    ]);
    return {
      group: "g",
      env: "counter",
      roles,
      reward: 0,
      perTurn: [],
      turnEnds: [roles.length - 1],
      end: "finished",
      oldLogprobs: new Float32Array(roles.length),
      ...(values ? { values: Float32Array.from(values) } : {}),
    };
  };

  const withAdvantage = (advantage: Partial<Plan["algorithm"]["advantage"]>): Plan => {
    const p = plan("rerender");
    return { ...p, algorithm: { ...p.algorithm, advantage: { ...p.algorithm.advantage, ...advantage } } };
  };

  it("gives every call of an episode the episode's group advantage, with the baseline over episodes", () => {
    const p = withAdvantage({ estimator: "group", baseline: "leave_one_out", normalize: "none" });
    const episodes = [
      {
        group: "1:0",
        env: "counter",
        reward: 1,
        perTurn: [0, 1],
        end: "finished" as const,
        steps: [
          { turn: 0, scored: call(3, 2) },
          { turn: 1, scored: call(5, 2) },
        ],
      },
      {
        group: "1:0",
        env: "counter",
        reward: 0,
        perTurn: [0],
        end: "finished" as const,
        steps: [{ turn: 0, scored: call(3, 4) }],
      },
    ];
    const result = computeStepwiseAdvantages(p, episodes);
    expect(result.advantages.map((a) => Array.from(a))).toEqual([
      [0, 0, 0, 1, 1],
      [0, 0, 0, 0, 0, 1, 1],
      [0, 0, 0, -1, -1, -1, -1],
    ]);
    expect(result).toMatchObject({ groups: 1, effectiveGroups: 1 });
  });

  it("runs GAE across the calls' generated tokens, with each call's own values", () => {
    const p = withAdvantage({ estimator: "gae", normalize: "none", gamma: 1, lambda: 1, task_norm: false });
    const steps = [
      { turn: 0, scored: call(2, 2, [0, 0, 0.5, 0.25]) },
      { turn: 1, scored: call(3, 1, [0, 0, 0, 0.75]) },
    ];
    const result = computeStepwiseAdvantages(p, [
      { group: "1:0", env: "counter", reward: 1, perTurn: [0.5, 0.5], end: "finished", steps },
    ]);
    // The same as one trajectory of those generated tokens with those values.
    const whole: ScoredTrajectory = {
      group: "1:0",
      env: "counter",
      roles: Uint8Array.from([Role.prompt, 2, 2, 2]),
      reward: 1,
      perTurn: [0.5, 0.5],
      turnEnds: [2, 3],
      end: "finished",
      oldLogprobs: new Float32Array(4),
      values: Float32Array.from([0, 0.5, 0.25, 0.75]),
    };
    const reference = computeAdvantages(p, [whole]);
    expect(Array.from(result.advantages[0]!)).toEqual([0, 0, ...Array.from(reference.advantages[0]!.subarray(1, 3))]);
    expect(Array.from(result.advantages[1]!)).toEqual([0, 0, 0, reference.advantages[0]![3]]);
    expect(Array.from(result.returns![1]!)).toEqual([0, 0, 0, reference.returns![0]![3]]);
  });
  it("credits the reward of a turn without a call of its own (a pool turn) to the last generated token before it", () => {
    const p = withAdvantage({ estimator: "gae", normalize: "none", gamma: 1, lambda: 1, task_norm: false });
    // Turn 0 is a pool turn (no sample; its reward reaches no policy token), turn 1 the policy's, turn 2 a pool turn again.
    const steps = [{ turn: 1, scored: call(4, 2, [0, 0, 0, 0, 0, 0]) }];
    const result = computeStepwiseAdvantages(p, [
      { group: "1:0", env: "counter", reward: 3.5, perTurn: [0.5, 1, 2], end: "finished", steps },
    ]);
    // With zero values and gamma = lambda = 1 each token's advantage is the reward still to come.
    expect(Array.from(result.advantages[0]!)).toEqual([0, 0, 0, 0, 3, 3]);
  });
});
