import { describe, expect, it } from "vitest";
import { Role } from "../../src/episode/buffer.js";
import { runEpisode, type EpisodeInput } from "../../src/episode/harness.js";
import { ToolCallValidator } from "../../src/contracts/tool-calls.js";
import { planSchema, type Plan } from "../../src/plan/schema.js";
import { compilePlans, counterSpec } from "../helpers/plans.js";
import { CounterEnv, ScriptedPolicy } from "../helpers/scripted.js";

const call = (name: string, args: object = {}) => `<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`;

/** The counter env, recording every call it executes. */
class RecordingCounterEnv extends CounterEnv {
  readonly calls: { name: string; arguments: unknown }[] = [];
  override async step(c: Parameters<CounterEnv["step"]>[0]) {
    this.calls.push({ name: c.name, arguments: c.arguments });
    return super.step(c);
  }
}

function input(plan: Plan, policy: ScriptedPolicy, env: CounterEnv): EpisodeInput {
  return {
    plan,
    envName: "counter",
    env,
    policy,
    tools: plan.tools,
    validator: new ToolCallValidator(),
    stopIds: [],
    seed: (t) => t,
  };
}

describe("harness", () => {
  it("runs a successful episode: roles per token, each prompt extending the last, terminated by the env", async () => {
    const [plan] = compilePlans(counterSpec("harness { max_turns: 5 }"));
    const policy = new ScriptedPolicy([call("step"), call("step")]);
    const env = new CounterEnv({ goal: 2 });
    const ep = await runEpisode(input(plan!, policy, env));
    expect(ep.end).toBe("finished");
    expect(ep.episode).toMatchObject({
      turns: 2,
      tool_calls: 2,
      invalid_calls: 0,
      terminated: true,
      truncated: false,
      aborted: false,
    });
    expect(env.closed).toBe(true);
    // Every prompt begins with the previous one; the final ids extend the last prompt.
    expect(policy.prompts.length).toBe(2);
    expect(Array.from(policy.prompts[1]!.subarray(0, policy.prompts[0]!.length))).toEqual(
      Array.from(policy.prompts[0]!),
    );
    // Generated tokens carry their policy version and log-probs; nothing else does.
    const generated = [...ep.roles].map((r, i) => (r === Role.generated ? i : -1)).filter((i) => i >= 0);
    expect(generated.length).toBe(2 * call("step").length);
    for (let i = 0; i < ep.ids.length; i++) {
      expect(ep.versions[i]).toBe(ep.roles[i] === Role.generated ? 5 : -1);
      expect(ep.logprobs[i]).toBeCloseTo(ep.roles[i] === Role.generated ? -0.1 : 0, 6);
    }
    expect(ep.roles.includes(Role.observation)).toBe(true);
    expect(ep.final.env("success")).toBe(true);
    expect(ep.states.length).toBe(3);
  });

  it("turns a missing, malformed or invalid call into an error observation and counts it", async () => {
    const [plan] = compilePlans(counterSpec("harness { max_turns: 4 }"));
    const policy = new ScriptedPolicy([
      "thinking...",
      "<tool_call>{oops</tool_call>",
      call("write", { value: "z" }),
      call("fly"),
    ]);
    const ep = await runEpisode(input(plan!, policy, new CounterEnv({ goal: 9 })));
    expect(ep.episode.invalid_calls).toBe(4);
    expect(ep.toolCalls.map((c) => c.result)).toEqual([
      "No tool call found. Call one of: step, write.",
      "Error: the tool call is not complete JSON.",
      "Error: invalid arguments for 'write': value must be equal to one of the allowed values (a, b)",
      "Error: there is no tool 'fly'; available: step, write",
    ]);
  });

  it("keeps truncation apart from termination: a turn budget with on_budget truncate vs terminate", async () => {
    const [truncating] = compilePlans(counterSpec("harness { max_turns: 2, on_budget: truncate }"));
    const t = await runEpisode(input(truncating!, new ScriptedPolicy([call("step")]), new CounterEnv({ goal: 5 })));
    expect(t.end).toBe("truncated");
    expect(t.episode).toMatchObject({ truncated: true, terminated: false, aborted: true });

    const [terminating] = compilePlans(counterSpec("harness { max_turns: 2, on_budget: terminate }"));
    const a = await runEpisode(input(terminating!, new ScriptedPolicy([call("step")]), new CounterEnv({ goal: 5 })));
    expect(a.end).toBe("aborted");
    expect(a.episode).toMatchObject({ truncated: false, terminated: true, aborted: true });
  });

  it("ends at the response-length budget", async () => {
    const [plan] = compilePlans(counterSpec("harness { max_turns: 4, max_response_tokens: 10 }"));
    const ep = await runEpisode(input(plan!, new ScriptedPolicy(["x".repeat(50)]), new CounterEnv({ goal: 5 })));
    expect(ep.episode.aborted).toBe(true);
    expect(ep.episode.tokens).toBe(10);
    expect(ep.end).toBe("truncated");
  });

  it("records a turn cut at max_response_tokens as docs/semantics.md says: truncated, or aborted under on_budget: terminate, and never acts on it", async () => {
    for (const [onBudget, end] of [
      ["truncate", "truncated"],
      ["terminate", "aborted"],
    ] as const) {
      const [plan] = compilePlans(
        counterSpec(`harness { max_turns: 4, max_response_tokens: 10, on_budget: ${onBudget} }`),
      );
      const env = new RecordingCounterEnv({ goal: 5 });
      const ep = await runEpisode(input(plan!, new ScriptedPolicy([call("step")]), env));
      expect(ep.end, onBudget).toBe(end);
      expect(ep.episode).toMatchObject({
        turns: 1,
        aborted: true,
        truncated: onBudget === "truncate",
        terminated: onBudget === "terminate",
      });
      expect(env.count, "the cut turn's call never reached the env").toBe(0);
    }
  });

  it("blocks a call a constraint forbids; the refusal is the observation", async () => {
    const [plan] = compilePlans(
      counterSpec('harness { max_turns: 2 }\n  constraints { no_writes: block(tool.name == "write") }'),
    );
    const env = new CounterEnv({ goal: 5 });
    const ep = await runEpisode(input(plan!, new ScriptedPolicy([call("write", { value: "a" }), call("step")]), env));
    expect(ep.toolCalls[0]).toMatchObject({
      name: "write",
      blocked: true,
      result: "Refused: the call 'write' is blocked by the constraint 'no_writes'.",
    });
    expect(env.count).toBe(1);
  });

  it("judges the call itself before it runs: call.tool and call.args refuse the first forbidden call", async () => {
    const [plan] = compilePlans(
      counterSpec(
        'harness { max_turns: 3 }\n  constraints { no_a: block(call.tool == "write" and call.args.value == "a") }',
      ),
    );
    const env = new RecordingCounterEnv({ goal: 5 });
    const ep = await runEpisode(
      input(
        plan!,
        new ScriptedPolicy([call("write", { value: "a" }), call("write", { value: "b" }), call("step")]),
        env,
      ),
    );
    const refusal = "Refused: the call 'write' is blocked by the constraint 'no_a'.";
    expect(ep.toolCalls.map((c) => [c.name, c.arguments, c.blocked, c.valid])).toEqual([
      ["write", { value: "a" }, true, true],
      ["write", { value: "b" }, false, true],
      ["step", {}, false, true],
    ]);
    expect(ep.toolCalls[0]!.result).toBe(refusal);
    // The env never saw the forbidden call; the model saw the refusal as the observation.
    expect(env.calls).toEqual([
      { name: "write", arguments: { value: "b" } },
      { name: "step", arguments: {} },
    ]);
    expect(String.fromCodePoint(...[...ep.ids].filter((_, i) => ep.roles[i] === Role.observation))).toContain(refusal);
  });

  it("applies a constraint over an argument only to calls that carry it (no run-time error for the others)", async () => {
    for (const condition of ['starts_with(call.args.value, "a")', 'tool.args.value == "a"']) {
      const [plan] = compilePlans(counterSpec(`harness { max_turns: 2 }\n  constraints { no_a: block(${condition}) }`));
      const env = new RecordingCounterEnv({ goal: 5 });
      const ep = await runEpisode(input(plan!, new ScriptedPolicy([call("step"), call("write", { value: "a" })]), env));
      expect(
        ep.toolCalls.map((c) => c.blocked),
        condition,
      ).toEqual([false, true]);
      expect(
        env.calls.map((c) => c.name),
        condition,
      ).toEqual(["step"]);
    }
  });

  it("makes a state signal a constraint reads and the env left out, or reported mistyped, the episode's env error", async () => {
    const [plan] = compilePlans(
      counterSpec("harness { max_turns: 3 }\n  constraints { stuck: block(state.progress >= 1) }"),
    );
    /** The counter env, reporting `progress` from reset as the given value (undefined: not at all). */
    const reporting = (progress: unknown): CounterEnv => {
      const env = new CounterEnv({ goal: 5 });
      env.reset = async () => ({
        text: "count",
        signals: (progress === undefined ? { other: 1 } : { progress }) as unknown as { progress: number },
      });
      return env;
    };
    const missing = await runEpisode(input(plan!, new ScriptedPolicy([call("step")]), reporting(undefined)));
    expect(missing.end).toBe("env_error");
    expect(missing.error).toBe(
      "env 'counter' did not report the signal 'state.progress' (it reported 'other'), which the constraint 'stuck' reads",
    );
    const mistyped = await runEpisode(input(plan!, new ScriptedPolicy([call("step")]), reporting("0.5")));
    expect(mistyped.end).toBe("env_error");
    expect(mistyped.error).toBe(
      "env 'counter' reported the signal 'state.progress' as \"0.5\", but it is declared number (a number is a finite number), which the constraint 'stuck' reads",
    );
  });

  it("refuses by regular expression on an argument", async () => {
    const [plan] = compilePlans(
      counterSpec('harness { max_turns: 2 }\n  constraints { no_b: block(matches(call.args.value, "^[b-z]$")) }'),
    );
    const env = new RecordingCounterEnv({ goal: 5 });
    const ep = await runEpisode(
      input(plan!, new ScriptedPolicy([call("write", { value: "b" }), call("write", { value: "a" })]), env),
    );
    expect(ep.toolCalls.map((c) => c.blocked)).toEqual([true, false]);
  });

  it("truncates long observations per the overflow policy, after tokenizing them once", async () => {
    const [plan] = compilePlans(
      counterSpec("harness { max_turns: 1, observation { max_tokens: 8, overflow: keep_tail } }"),
    );
    const ep = await runEpisode(
      input(plan!, new ScriptedPolicy([call("step")]), new CounterEnv({ goal: 5, observation: "0123456789abcdef" })),
    );
    const observed = [...ep.ids].filter((_, i) => ep.roles[i] === Role.observation);
    expect(String.fromCodePoint(...observed)).toBe("89abcdef");
  });

  it("records an env failure as env_error, not as a policy failure", async () => {
    const [plan] = compilePlans(counterSpec("harness { max_turns: 3 }"));
    const env = new CounterEnv({ goal: 5, failAt: 1 });
    const ep = await runEpisode(input(plan!, new ScriptedPolicy([call("step")]), env));
    expect(ep.end).toBe("env_error");
    expect(ep.error).toBe("server went away");
    expect(env.closed).toBe(true);
  });

  it("stops a tool call that runs past its time limit", async () => {
    const [plan] = compilePlans(
      counterSpec("harness { max_turns: 1 }").replace(
        'tool step { description: "advance the counter" }',
        'tool step { description: "advance the counter", timeout_s: 0.05 }',
      ),
    );
    const ep = await runEpisode(
      input(plan!, new ScriptedPolicy([call("step")]), new CounterEnv({ goal: 5, slowMs: 300 })),
    );
    expect(ep.toolCalls[0]).toMatchObject({ error: "timeout", result: "Error: 'step' did not finish within 0.05 s." });
  });
});

describe("harness prompts from a plan file", () => {
  it("shows the model the same tool descriptions for a plan read back through the plan schema (resume, arl run plan.json)", async () => {
    const [plan] = compilePlans(counterSpec("harness { max_turns: 1 }"));
    const reread = planSchema.parse(JSON.parse(JSON.stringify(plan)));
    // The schema puts `$schema` and `type` first; the written plan has the keys sorted.
    expect(Object.keys(reread.tools[0]!.definition.function.parameters)).not.toEqual(
      Object.keys(plan!.tools[0]!.definition.function.parameters),
    );
    const prompts = await Promise.all(
      [plan!, reread].map(async (p) => {
        const policy = new ScriptedPolicy([call("step")]);
        await runEpisode(input(p, policy, new CounterEnv({ goal: 1 })));
        return Array.from(policy.prompts[0]!);
      }),
    );
    expect(prompts[1]).toEqual(prompts[0]);
    expect(String.fromCodePoint(...prompts[0]!)).toContain(
      '"parameters":{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false',
    );
  });
});
