// The README's example spec compiles, and its quick-start commands exist; the fragments of the
// user guide (docs/guide.md, where the README's later sections went) check clean.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Compiler } from "../src/compiler.js";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const guide = readFileSync(new URL("../docs/guide.md", import.meta.url), "utf8");

describe("README and user guide", () => {
  it("shows a spec that checks without errors and warns about the self-inclusive baseline", () => {
    const spec = /```arl\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(spec).toBeDefined();
    const file = path.join(mkdtempSync(path.join(tmpdir(), "arl-readme-")), "example.arl");
    writeFileSync(file, spec!);
    const result = new Compiler().check(file);
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(result.diagnostics.map((d) => d.code)).toContain("self-inclusive-baseline");
  });

  it("the guide shows constraints that check clean against the sql env they name", () => {
    const constraints = /## Constraints[\s\S]*?```arl\n([\s\S]*?)```/.exec(guide)?.[1];
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

  it("the guide shows an own-model fragment (local checkpoint, dtype, LoRA, history, SFT records) that checks clean inside an experiment", () => {
    const fragment = /## Your own model[\s\S]*?```arl\n([\s\S]*?)```/.exec(guide)?.[1];
    expect(fragment).toContain("lora");
    const dir = mkdtempSync(path.join(tmpdir(), "arl-readme-"));
    mkdirSync(path.join(dir, "data"));
    writeFileSync(
      path.join(dir, "data", "sft.jsonl"),
      `${JSON.stringify({
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "hello" },
        ],
      })}\n`,
    );
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
    const commands = block
      .split("\n")
      .map((l) => l.replace(/#.*$/, "").trim())
      .filter(Boolean);
    expect(commands.length).toBe(2);
    expect(commands[1]).toBe("npm test");
    expect(readFileSync(new URL("../.ci/run", import.meta.url), "utf8")).toMatch(/^npm test$/m);
  });
});

describe("README links", () => {
  it("every section the README used to hold is one link away, at a heading that exists", () => {
    const links = [
      ...readme.matchAll(/\]\(((?:docs\/[\w.-]+\.md|CONTRIBUTING\.md|[\w/.-]+README\.md))(?:#([\w-]+))?\)/g),
    ].map((m) => ({ file: m[1]!, anchor: m[2] }));
    const slug = (heading: string) =>
      heading
        .toLowerCase()
        .replace(/[^\w\s-]/g, "")
        .trim()
        .replace(/\s+/g, "-");
    for (const { file, anchor } of links) {
      const text = readFileSync(new URL(`../${file}`, import.meta.url), "utf8");
      if (anchor)
        expect(
          [...text.matchAll(/^#+ (.*)$/gm)].map((m) => slug(m[1]!)),
          `${file}#${anchor}`,
        ).toContain(anchor);
    }
    const targets = new Set(links.map((l) => `${l.file}${l.anchor ? `#${l.anchor}` : ""}`));
    for (const moved of [
      "docs/guide.md#reading-a-run",
      "docs/guide.md#sweeps-and-ablations",
      "docs/guide.md#your-own-model",
      "docs/guide.md#bring-your-own-agent",
      "docs/guide.md#prompts-and-a-verifier-rlvr",
      "docs/guide.md#your-own-environment",
      "docs/guide.md#constraints",
      "docs/guide.md#data-files-and-confinement",
      "docs/guide.md#the-code-sandbox",
      "docs/commands.md",
      "docs/benchmarks.md",
      "CONTRIBUTING.md#what-the-full-suite-needs",
    ])
      expect(targets, moved).toContain(moved);
  });

  it("stays a first hour's read", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(210);
  });
});
