// The README's example spec compiles, and its quick-start commands exist.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Compiler } from "../src/compiler.js";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

describe("README", () => {
  it("shows a spec that checks without errors and warns about the self-inclusive baseline", () => {
    const spec = /```arl\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(spec).toBeDefined();
    const file = path.join(mkdtempSync(path.join(tmpdir(), "arl-readme-")), "example.arl");
    writeFileSync(file, spec!);
    const result = new Compiler().check(file);
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(result.diagnostics.map((d) => d.code)).toContain("self-inclusive-baseline");
  });

  it("shows constraints that check clean against the sql env they name", () => {
    const constraints = /## Constraints[\s\S]*?```arl\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(constraints).toContain("call.tool");
    const spec = `import "std/algorithms" as algo
import "std/envs/sql" as sql
experiment e {
  policy { model: "builtin:tiny" }
  env bank extends sql.bank_demo {}
  reward { success: outcome.result_matches }
${constraints}  algorithm extends algo.rloo {}
}
`;
    const file = path.join(mkdtempSync(path.join(tmpdir(), "arl-readme-")), "constraints.arl");
    writeFileSync(file, spec);
    const result = new Compiler().check(file);
    expect(result.diagnostics).toEqual([]);
    expect(result.model?.experiments[0]?.variants[0]?.constraints.size).toBe(4);
  });

  it("shows an own-model fragment (local checkpoint, dtype, LoRA, history, SFT records) that checks clean inside an experiment", () => {
    const fragment = /## Your own model[\s\S]*?```arl\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(fragment).toContain("lora");
    const dir = mkdtempSync(path.join(tmpdir(), "arl-readme-"));
    mkdirSync(path.join(dir, "data"));
    writeFileSync(path.join(dir, "data", "sft.jsonl"), `${JSON.stringify({ messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] })}\n`);
    const file = path.join(dir, "own-model.arl");
    writeFileSync(
      file,
      `import "std/envs/rooms" as rooms
experiment e {
${fragment}  env quest extends rooms.world {}
  reward { success: outcome.success }
}
`,
    );
    const result = new Compiler().check(file);
    expect(result.diagnostics.filter((d) => d.severity !== "info")).toEqual([]);
  });

  it("states the two quick-start commands, the second being the test command CI runs", () => {
    const block = /## Quick start[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const commands = block.split("\n").map((l) => l.replace(/#.*$/, "").trim()).filter(Boolean);
    expect(commands.length).toBe(2);
    expect(commands[1]).toBe("npm test");
    expect(readFileSync(new URL("../.ci/run", import.meta.url), "utf8")).toMatch(/^npm test$/m);
  });
});
