// Constraint conditions that judge the call itself: `call.tool`, `call.args.NAME` typed by the
// tool's parameter schema, and the string tests contains / starts_with / matches.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import type { Diagnostic } from "../../src/diagnostics/diagnostic.js";
import { compilePlans, counterSpec } from "../helpers/plans.js";

/** The counter experiment (tools `step` and `write(value: "a" | "b")`) with `body` added. */
function diagnose(body: string): { text: string; diagnostics: readonly Diagnostic[] } {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-call-"));
  const file = path.join(dir, "spec.arl");
  const text = counterSpec(body);
  writeFileSync(file, text);
  return { text, diagnostics: new Compiler().check(file).diagnostics.filter((d) => d.severity === "error") };
}

/** The one error of `constraints { c: block(CONDITION) }`, and the source text it points at. */
function oneError(condition: string): Diagnostic & { at: string } {
  const { text, diagnostics } = diagnose(`constraints { c: block(${condition}) }`);
  expect(diagnostics, JSON.stringify(diagnostics)).toHaveLength(1);
  const d = diagnostics[0]!;
  expect(d.hint, "every diagnostic says what to do").toBeTruthy();
  return { ...d, at: text.slice(d.range.start.offset, d.range.end.offset) };
}

const conditionOf = (condition: string) =>
  compilePlans(counterSpec(`constraints { c: block(${condition}) }`))[0]!.constraints.c!.condition;

describe("call.* in constraint conditions", () => {
  it("types call.tool as the tool's name and call.args.NAME by the tool's parameter schema", () => {
    expect(conditionOf('call.tool == "write" and call.args.value == "a"')).toEqual({
      op: "and",
      args: [
        {
          op: "==",
          args: [
            { op: "signal", namespace: "tool", name: "name", type: "string", timing: "state" },
            { op: "const", value: "write" },
          ],
        },
        {
          op: "==",
          args: [
            { op: "signal", namespace: "tool", name: "args.value", type: "string", timing: "state" },
            { op: "const", value: "a" },
          ],
        },
      ],
    });
  });

  it("lowers tool.name, the older spelling, to the same plan as call.tool", () => {
    expect(conditionOf('tool.name == "write"')).toEqual(conditionOf('call.tool == "write"'));
  });

  it("reports a tool the experiment does not have at the name, with the closest one", () => {
    const d = oneError('call.tool == "wirte"');
    expect(d).toMatchObject({
      code: "unknown-tool",
      at: '"wirte"',
      message: "the experiment has no tool 'wirte'",
      hint: "did you mean 'write'?",
    });
  });

  it("accepts a tool of the experiment that this variant does not offer (an ablation arm without it)", () => {
    const { diagnostics } = diagnose(
      'harness { tools: [counter.step] }\n  constraints { c: block(call.tool == "write" and call.args.value == "a") }',
    );
    expect(diagnostics).toEqual([]);
  });

  it("reports an argument the named tool does not take, even when another tool takes it", () => {
    const d = oneError('call.tool == "step" and call.args.value == "a"');
    expect(d).toMatchObject({ code: "unknown-argument", at: "call.args.value" });
    expect(d.message).toContain("no tool 'step' takes an argument 'value'");
  });

  it("reports a value an argument's enum does not allow (the test could never hold)", () => {
    const d = oneError('call.tool == "write" and call.args.value == "c"');
    expect(d).toMatchObject({ code: "impossible-argument-value", at: '"c"' });
    expect(d.message).toContain('is one of "a", "b"');
  });

  it("reports an argument no tool takes, with the closest name", () => {
    expect(oneError('call.args.vaule == "a"')).toMatchObject({
      code: "unknown-argument",
      at: "call.args.vaule",
      hint: "did you mean 'value'?",
    });
  });

  it("reports an argument compared with a value of another type", () => {
    expect(oneError("call.args.value > 3")).toMatchObject({ code: "type-mismatch", at: "call.args.value > 3" });
    expect(oneError("call.args.value == 3")).toMatchObject({ code: "type-mismatch" });
  });

  it("reports call.* outside constraints", () => {
    const spec = counterSpec("").replace(
      "reward { success: outcome.success }",
      'reward { success: outcome.success, writes: call.tool == "write" }',
    );
    const dir = mkdtempSync(path.join(tmpdir(), "arl-call-"));
    writeFileSync(path.join(dir, "spec.arl"), spec);
    const errors = new Compiler().check(path.join(dir, "spec.arl")).diagnostics.filter((d) => d.severity === "error");
    expect(errors.map((d) => d.code)).toEqual(["unknown-signal"]);
    expect(errors[0]!.message).toContain("only be used in constraints");
  });
});

describe("string tests", () => {
  it("compile contains, starts_with and matches over strings, also as the whole condition", () => {
    expect(conditionOf('contains(call.args.value, "a")')).toMatchObject({ op: "contains" });
    expect(conditionOf('call.tool == "write" and starts_with(call.args.value, "b")')).toMatchObject({
      op: "and",
      args: [{ op: "==" }, { op: "starts_with" }],
    });
    expect(conditionOf('not matches(call.tool, "^(step|write)$")')).toMatchObject({
      op: "not",
      args: [{ op: "matches" }],
    });
  });

  it("reports an invalid regular expression at the pattern", () => {
    const d = oneError('matches(call.args.value, "(a")');
    expect(d).toMatchObject({ code: "invalid-regex", at: '"(a"' });
    expect(d.message).toContain("Unterminated group");
  });

  it("requires the pattern to be a string literal, and strings to test", () => {
    expect(oneError("matches(call.args.value, call.tool)")).toMatchObject({ code: "type-mismatch", at: "call.tool" });
    expect(oneError('starts_with(episode.turns, "a")')).toMatchObject({ code: "type-mismatch", at: "episode.turns" });
    expect(oneError("contains(call.tool, 3)")).toMatchObject({ code: "type-mismatch", at: "3" });
    expect(oneError('contains(call.tool, "a", "b")')).toMatchObject({ code: "invalid-call" });
  });
});

describe("what a constraint can read", () => {
  it("reports a condition that is not a test, with how to write one", () => {
    expect(oneError("state.progress")).toMatchObject({
      code: "type-mismatch",
      at: "state.progress",
      message: "expected a condition (true/false), found a number",
    });
  });

  it("refuses an outcome signal: it is known only when the episode has ended, after every call", () => {
    expect(oneError("outcome.success")).toMatchObject({ code: "outcome-in-constraint", at: "outcome.success" });
    expect(oneError('call.tool == "write" and episode.terminated')).toMatchObject({
      code: "outcome-in-constraint",
      at: "episode.terminated",
    });
  });
});

describe("functions as a whole reward term", () => {
  it("accepts min(...) written as the whole term (it was reported as an unknown function)", () => {
    const [plan] = compilePlans(
      counterSpec("").replace(
        "reward { success: outcome.success }",
        "reward { success: outcome.success, capped: min(state.progress, 0.5) }",
      ),
    );
    expect(plan!.reward.terms.capped!.expr).toMatchObject({ op: "min" });
  });
});
