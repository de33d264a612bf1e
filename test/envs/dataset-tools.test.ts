// A multi-turn dataset task: the model may call the env's built-in tools (calculator, lookup)
// before its final answer, which is scored as a single-turn answer is. The calculator's
// arithmetic, the checks at compile time (an unknown tool, a missing argument, lookup without its
// column, a row without it), and whole episodes through the harness with a scripted policy.
import { describe, expect, it } from "vitest";
import { ToolCallValidator } from "../../src/contracts/tool-calls.js";
import { createDatasetEnv } from "../../src/envs/adapters/dataset/index.js";
import { evaluateArithmetic } from "../../src/envs/adapters/dataset/tools.js";
import { runEpisode, toolsFor } from "../../src/episode/harness.js";
import { compileDatasetSpec } from "../helpers/dataset.js";
import { ScriptedPolicy } from "../helpers/scripted.js";

const call = (name: string, args: object) => `<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`;
const rows = (n: number, extra: (i: number) => object = () => ({})) =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({ prompt: `What is ${i} * 17 + 3?`, answer: String(i * 17 + 3), ...extra(i) }),
  ).join("\n");

describe("the calculator's arithmetic", () => {
  it("evaluates numbers, + - * / %, powers (right-associative), parentheses and signs", () => {
    expect(evaluateArithmetic("17 * 23")).toBe(391);
    expect(evaluateArithmetic("(1 + 2) * -3 - 4 / 8")).toBe(-9.5);
    expect(evaluateArithmetic("2 ^ 3 ^ 2")).toBe(512);
    expect(evaluateArithmetic("2 ** -1 + 7 % 4")).toBe(3.5);
    expect(evaluateArithmetic("1,234 + .5e1")).toBe(1239);
  });

  it("refuses what is not arithmetic, saying where", () => {
    expect(() => evaluateArithmetic("2 + x")).toThrow("unexpected 'x' at character 5");
    expect(() => evaluateArithmetic("(2 + 3")).toThrow("expected ')' at the end");
    expect(() => evaluateArithmetic("4 / (2 - 2)")).toThrow("division by zero");
    expect(() => evaluateArithmetic("")).toThrow("the expression is empty");
    expect(() => evaluateArithmetic("9 ^ 999")).toThrow("not a finite number");
  });
});

describe("dataset tools at compile time", () => {
  it("an unknown tool, a tool without its argument, lookup without its column or a column without lookup are each reported", () => {
    const files = { "rows.jsonl": rows(5) };
    const unknown = compileDatasetSpec(
      `    data: "./rows.jsonl"\n    tool search { description: "Search.", parameters { q { type: string } } }`,
      files,
    );
    expect(unknown.errors.map((d) => [d.code, d.message])).toEqual([
      ["dataset-tool-unknown", "env 'q': a dataset env serves the tools calculator and lookup, not 'search'"],
    ]);
    const argument = compileDatasetSpec(
      `    data: "./rows.jsonl"\n    tool calculator { description: "Arithmetic.", parameters { expr { type: string } } }`,
      files,
    );
    expect(argument.errors.map((d) => d.code)).toEqual(["dataset-tool-parameters"]);
    expect(argument.errors[0]?.hint).toBe(
      "declare parameters { expression { type: string } } (or extend dataset.calculator_task)",
    );
    expect(compileDatasetSpec(`    data: "./rows.jsonl"`, files, "lookup_task").errors.map((d) => d.code)).toEqual([
      "dataset-lookup-column-missing",
    ]);
    expect(
      compileDatasetSpec(`    data: "./rows.jsonl"\n    lookup_column: "facts"`, files).errors.map((d) => d.code),
    ).toEqual(["dataset-lookup-column-unused"]);
  });

  it("a row without the lookup column is a bad row at its line", () => {
    const text = rows(5, (i) => (i === 3 ? {} : { facts: { a: "1" } }));
    const { errors } = compileDatasetSpec(
      `    data: "./rows.jsonl"\n    lookup_column: "facts"`,
      { "rows.jsonl": text },
      "lookup_task",
    );
    expect(errors[0]?.message).toBe(
      "env 'q': bad rows in the data file:\nrows.jsonl:4: column 'facts' is missing, not an object of entries (the lookup tool reads it)",
    );
  });
});

describe("a multi-turn dataset episode", () => {
  /** One episode of task `task` with a scripted policy saying `turns`, the harness's own loop. */
  async function play(
    fields: string,
    text: string,
    env: string,
    turns: string[],
    task = 2,
    harness = "harness { max_turns: 4 }",
  ) {
    const { dir, plan, errors } = compileDatasetSpec(
      `    data: "./rows.jsonl"\n    scorer: number\n${fields}`,
      { "rows.jsonl": text },
      env,
      harness,
    );
    expect(errors).toEqual([]);
    const kind = createDatasetEnv({ root: dir });
    const instance = await kind.create(plan!.envs.q as never, task, 0);
    return runEpisode({
      plan: plan!,
      envName: "q",
      env: instance,
      policy: new ScriptedPolicy(turns),
      tools: toolsFor(plan!, "q"),
      validator: new ToolCallValidator(),
      stopIds: [],
      seed: (t) => t,
    });
  }

  it("calls the calculator, reads its result, and its final answer is scored", async () => {
    const ep = await play("", rows(5), "calculator_task", [
      call("calculator", { expression: "2 * 17 + 3" }),
      "It is 37.",
    ]);
    expect(ep.end).toBe("finished");
    expect(ep.toolCalls.map((c) => [c.name, c.valid, c.result])).toEqual([["calculator", true, "37"]]);
    expect(ep.episode).toMatchObject({ turns: 2, tool_calls: 1, invalid_calls: 0, terminated: true });
    expect(ep.final.env("correct")).toBe(true);
    expect(ep.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
  });

  it("a malformed expression is the model's to correct; a wrong final answer scores 0", async () => {
    const ep = await play("", rows(5), "calculator_task", [
      call("calculator", { expression: "2 * (17 + 3" }),
      call("calculator", { expression: "2 * 17 + 3" }),
      "So 36.",
    ]);
    expect(ep.toolCalls.map((c) => c.result)).toEqual(["Error: expected ')' at the end.", "37"]);
    expect(ep.end).toBe("finished");
    expect(ep.final.env("correct")).toBe(false);
    expect(ep.final.env("answered")).toBe(true);
  });

  it("looks up its row's entries; an episode that runs out of turns while calling is unanswered", async () => {
    const text = rows(5, (i) => ({ facts: { multiplier: "17", offset: "3", row: String(i) } }));
    const fields = `    lookup_column: "facts"`;
    const ep = await play(fields, text, "lookup_task", [
      call("lookup", { key: "offset" }),
      call("lookup", { key: "nope" }),
      "37",
    ]);
    expect(ep.toolCalls.map((c) => c.result)).toEqual(["3", "No entry 'nope'. Keys: multiplier, offset, row."]);
    expect(ep.final.env("correct")).toBe(true);
    const cut = await play(
      fields,
      text,
      "lookup_task",
      [call("lookup", { key: "row" })],
      2,
      "harness { max_turns: 2 }",
    );
    expect(cut.end).toBe("truncated");
    expect([cut.final.env("answered"), cut.final.env("correct"), cut.final.env("score")]).toEqual([false, false, 0]);
  });
});
