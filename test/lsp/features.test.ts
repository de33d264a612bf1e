// Hover, completion, definition, symbols, formatting, code actions and rename, each asked of
// the real server (`arl lsp --stdio`) over JSON-RPC, on valid and on broken documents.
import { readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { format } from "../../src/language/printer.js";
import { applyEdits, LspClient, positionOf, REPO, tempSpecs } from "./client.js";
import { LIB, lineOf, MAIN, stdlibText } from "./fixtures.js";

let client: LspClient;
let specs: ReturnType<typeof tempSpecs>;
const mainUri = () => specs.uri("main.arl");
const libUri = () => specs.uri("lib.arl");
const stdUri = (rel: string) => pathToFileURL(`${REPO}/stdlib/${rel}`).href;

/** Opens `text` as a new document (a fresh name each time) and waits for its diagnostics. */
let counter = 0;
async function openDoc(text: string, name = `doc${counter++}.arl`): Promise<string> {
  specs.write(name, text);
  const uri = specs.uri(name);
  await client.open(uri, text);
  return uri;
}

beforeAll(async () => {
  specs = tempSpecs({ "main.arl": MAIN, "lib.arl": LIB });
  client = await LspClient.start({ debounceMs: 0, rootPath: specs.dir });
  await client.open(libUri(), LIB);
  await client.open(mainUri(), MAIN);
});

afterAll(async () => {
  await client.stop();
  specs.dispose();
});

const hoverText = async (uri: string, text: string, needle: string, delta = 0, occurrence = 0) => {
  const h = await client.hover(uri, positionOf(text, needle, delta, occurrence));
  if (!h) return "";
  const c = h.contents;
  return typeof c === "string"
    ? c
    : "value" in c
      ? c.value
      : c.map((x) => (typeof x === "string" ? x : x.value)).join("\n");
};

describe("hover", () => {
  it("shows the schema's documentation of the field under the cursor", async () => {
    const text = await hoverText(mainUri(), MAIN, "baseline: mean", 2);
    expect(text).toContain("algorithm.advantage.baseline");
    expect(text).toContain("Group baseline: the group mean");
    expect(text).toContain("one of mean, leave_one_out, none");
    expect(text).toContain("Default: `none`");
  });

  it("documents block kinds and nested blocks", async () => {
    expect(await hoverText(mainUri(), MAIN, "harness {", 1)).toContain("The agent loop");
    expect(await hoverText(mainUri(), MAIN, "max_turns", 1)).toContain("Most model turns in one episode");
    expect(await hoverText(mainUri(), MAIN, "experiment demo", 12)).toContain("The demo experiment.");
  });

  it("shows effective values inherited through extends, with the file and line they come from", async () => {
    const grpoLine = lineOf(stdlibText("std/algorithms.arl"), "advantage { estimator: group, baseline: mean") + 1;
    const text = await hoverText(mainUri(), MAIN, "algorithm extends", 1);
    expect(text).toContain("extends `algo.grpo`");
    expect(text).toContain(`\`advantage.normalize: std\` from [std/algorithms.arl:${grpoLine}]`);
    expect(text).toContain("`group_size: 4` (here)");
    // A nested block that inherits part of its fields.
    const nested = await hoverText(mainUri(), MAIN, "advantage { baseline", 1);
    expect(nested).toContain("How advantages are computed.");
    expect(nested).toContain(`\`normalize: std\` from [std/algorithms.arl:${grpoLine}]`);
  });

  it("says what a signal, a tool and an env are", async () => {
    const signal = await hoverText(mainUri(), MAIN, "outcome.tests_passed", 10);
    expect(signal).toContain("1 when the final code passes every hidden test");
    expect(signal).toContain("bool outcome signal");
    const tool = await hoverText(mainUri(), MAIN, "code.run_tests", 6);
    expect(tool).toContain("Run the visible tests");
    const env = await hoverText(mainUri(), MAIN, "code.run_tests", 1);
    expect(env).toContain("env code");
  });

  it("explains a lint rule on its diagnostic and on its allow key", async () => {
    const published = client.publishedFor(mainUri()).at(-1)!;
    const lint = published.diagnostics.find((d) => d.code === "self-inclusive-baseline");
    expect(lint).toBeDefined();
    const h = await client.hover(mainUri(), lint!.range.start);
    const value = h && typeof h.contents === "object" && "value" in h.contents ? h.contents.value : "";
    expect(value).toContain("**self-inclusive-baseline** (lint rule)");
    expect(value).toMatch(/leave-one-out|RLOO/);

    const allowText = `import "std/envs/findmax" as findmax\nexperiment e {\n  policy { model: "builtin:tiny" }\n  env code extends findmax.task {}\n  allow { self-inclusive-baseline: "the original GRPO objective" }\n}\n`;
    const uri = await openDoc(allowText);
    const allowHover = await hoverText(uri, allowText, "self-inclusive-baseline", 3);
    expect(allowHover).toContain("**self-inclusive-baseline** (lint rule)");
  });
});

describe("hover on call.*", () => {
  it("says what call.tool and call.args.NAME are, and which tools take the argument", async () => {
    const text = MAIN.replace(
      "  algorithm extends algo.grpo {",
      '  constraints { c: block(call.tool == "write_code" and contains(call.args.code, "import")) }\n  algorithm extends algo.grpo {',
    );
    const uri = await openDoc(text);
    expect(await hoverText(uri, text, "call.tool", 6)).toContain("The name of the tool being called.");
    expect(await hoverText(uri, text, "call.args.code", 11)).toContain("taken by `write_code` (string)");
  });
});

describe("completion", () => {
  const labels = async (uri: string, text: string, needle: string, delta: number) =>
    (await client.completion(uri, positionOf(text, needle, delta))).map((i) => i.label);

  it("offers field names inside an unfinished block (algorithm { adv|)", async () => {
    const text = `import "std/algorithms" as algo\nexperiment e {\n  algorithm {\n    adv`;
    const uri = await openDoc(text);
    const items = await client.completion(uri, positionOf(text, "adv", 3));
    expect(items.map((i) => i.label)).toContain("advantage");
    expect(items.find((i) => i.label === "advantage")?.documentation).toMatchObject({
      value: expect.stringContaining("How advantages are computed"),
    });
    // Every field of the algorithm schema, none of another block's.
    expect(items.map((i) => i.label)).toEqual(expect.arrayContaining(["group_size", "clip", "kl", "reduction"]));
    expect(items.map((i) => i.label)).not.toContain("max_turns");
  });

  it("offers enum values after 'baseline: ', also in a broken document", async () => {
    const text = `experiment e {\n  algorithm {\n    advantage { baseline: \n  }\n`;
    const uri = await openDoc(text);
    expect(await labels(uri, text, "baseline: ", 10)).toEqual(
      expect.arrayContaining(["mean", "leave_one_out", "none"]),
    );
    expect(await labels(mainUri(), MAIN, "max_turns: 8", 11)).toEqual([]);
  });

  it("offers block kinds at the top and an experiment's blocks inside it", async () => {
    const text = `experiment e {\n  \n}\n\n`;
    const uri = await openDoc(text);
    expect(await labels(uri, text, "}\n\n", 3)).toEqual(
      expect.arrayContaining(["experiment", "env", "algorithm", "import"]),
    );
    expect(await labels(uri, text, "{\n  ", 4)).toEqual(
      expect.arrayContaining(["policy", "env", "harness", "reward", "algorithm", "sweep", "ablation", "allow"]),
    );
  });

  it("offers the env's signals after 'outcome.', 'state.' and '<env>.'", async () => {
    const text = MAIN.replace(
      "success: 1.0 * outcome.tests_passed",
      "success: 1.0 * outcome.\n    shaping: state.\n    named: code.",
    );
    const uri = await openDoc(text);
    const outcome = await labels(uri, text, "outcome.", 8);
    expect(outcome).toEqual(expect.arrayContaining(["tests_passed", "pass_fraction", "success"]));
    expect(outcome).not.toContain("test_runs");
    expect(await labels(uri, text, "state.", 6)).toEqual(
      expect.arrayContaining(["test_runs", "visible_pass_fraction"]),
    );
    expect(await labels(uri, text, "named: code.", 12)).toEqual(expect.arrayContaining(["tests_passed", "test_runs"]));
  });

  it("offers episode signals, tools of an env in harness.tools, and a module's declarations", async () => {
    const text = MAIN.replace("success: 1.0 * outcome.tests_passed", "cost: -0.1 * episode.")
      .replace("tools: [code.run_tests, code.finish]", "tools: [code.]")
      .replace("extends algo.grpo", "extends algo.");
    const uri = await openDoc(text);
    expect(await labels(uri, text, "episode.", 8)).toEqual(expect.arrayContaining(["tool_calls", "turns", "aborted"]));
    expect(await labels(uri, text, "[code.", 6)).toEqual(
      expect.arrayContaining(["run_tests", "read_code", "finish", "tools"]),
    );
    expect(await labels(uri, text, "extends algo.", 13)).toEqual(
      expect.arrayContaining(["grpo", "ppo", "rloo", "dr_grpo"]),
    );
    expect(await labels(uri, text, "extends findmax", 8)).toEqual(expect.arrayContaining(["algo", "findmax", "lib"]));
  });

  it("offers call.* in a constraint, the tools' argument names after 'call.args.', and the string tests", async () => {
    const text = MAIN.replace(
      "  algorithm extends algo.grpo {",
      "  constraints {\n    c: block(call.)\n    d: block(call.args.)\n  }\n  algorithm extends algo.grpo {",
    );
    const uri = await openDoc(text);
    expect(await labels(uri, text, "block(call.)", 11)).toEqual(expect.arrayContaining(["tool", "env", "args"]));
    const args = await client.completion(uri, positionOf(text, "block(call.args.)", 16));
    expect(args.find((i) => i.label === "code")).toMatchObject({ detail: "string argument of write_code" });
    expect(await labels(uri, text, "block(", 6)).toEqual(
      expect.arrayContaining(["call", "contains", "starts_with", "matches", "min"]),
    );
  });

  it("offers lint codes in allow and stdlib paths in imports", async () => {
    const text = `import "std/\nexperiment e {\n  allow { self-\n}\n`;
    const uri = await openDoc(text);
    const codes = await client.completion(uri, positionOf(text, "self-", 5));
    expect(codes.map((i) => i.label)).toContain("self-inclusive-baseline");
    expect(codes.find((i) => i.label === "self-inclusive-baseline")?.textEdit).toMatchObject({
      range: { start: positionOf(text, "self-") },
    });
    expect(await labels(uri, text, "std/", 4)).toEqual(expect.arrayContaining(["std/algorithms", "std/envs/findmax"]));
  });

  it("offers env kinds and discriminator values", async () => {
    const text = `experiment e {\n  env x {\n    kind: \n  }\n  algorithm { reduction: }\n}\n`;
    const uri = await openDoc(text);
    expect(await labels(uri, text, "kind: ", 6)).toEqual(
      expect.arrayContaining(["rooms", "findmax", "sql", "http", "subprocess"]),
    );
    expect(await labels(uri, text, "reduction: ", 11)).toEqual(
      expect.arrayContaining(["token_mean", "seq_mean_token_mean", "constant"]),
    );
  });
});

describe("go to definition", () => {
  it("goes from 'extends algo.grpo' to 'algorithm grpo' in the stdlib", async () => {
    const locations = await client.definition(mainUri(), positionOf(MAIN, "algo.grpo", 6));
    expect(locations).toHaveLength(1);
    expect(locations[0]!.uri).toBe(stdUri("std/algorithms.arl"));
    expect(locations[0]!.range.start.line).toBe(lineOf(stdlibText("std/algorithms.arl"), "algorithm grpo {"));
  });

  it("goes from an import to the file", async () => {
    const [lib] = await client.definition(mainUri(), positionOf(MAIN, '"./lib"', 2));
    expect(lib?.uri).toBe(libUri());
    const [std] = await client.definition(mainUri(), positionOf(MAIN, '"std/envs/findmax"', 3));
    expect(std?.uri).toBe(stdUri("std/envs/findmax.arl"));
  });

  it("goes from a tool reference to the tool block, through the env's extends", async () => {
    const findmax = stdlibText("std/envs/findmax.arl");
    const [tool] = await client.definition(mainUri(), positionOf(MAIN, "code.run_tests", 7));
    expect(tool?.uri).toBe(stdUri("std/envs/findmax.arl"));
    expect(tool?.range.start.line).toBe(lineOf(findmax, "tool run_tests"));
    const [env] = await client.definition(mainUri(), positionOf(MAIN, "code.run_tests", 1));
    expect(env).toMatchObject({ uri: mainUri(), range: { start: { line: lineOf(MAIN, "env code extends") } } });
    const [signal] = await client.definition(mainUri(), positionOf(MAIN, "outcome.tests_passed", 10));
    expect(signal).toMatchObject({
      uri: stdUri("std/envs/findmax.arl"),
      range: { start: { line: lineOf(findmax, "tests_passed {") } },
    });
  });

  it("goes to declarations of imported files and top-level tools", async () => {
    const [small] = await client.definition(mainUri(), positionOf(MAIN, "lib.small", 5));
    expect(small).toMatchObject({ uri: libUri(), range: { start: { line: lineOf(LIB, "env small") } } });
    const [lookup] = await client.definition(mainUri(), positionOf(MAIN, "lib.lookup", 5));
    expect(lookup).toMatchObject({ uri: libUri(), range: { start: { line: lineOf(LIB, "tool lookup") } } });
  });
});

describe("document symbols", () => {
  it("lists the blocks, nested", async () => {
    const symbols = await client.symbols(mainUri());
    expect(symbols.map((s) => s.name)).toEqual(["experiment demo", "experiment other"]);
    const demo = symbols[0]!;
    expect(demo.children!.map((c) => c.name)).toEqual(["policy", "env code", "harness", "reward", "algorithm"]);
    const algorithm = demo.children!.find((c) => c.name === "algorithm")!;
    expect(algorithm.detail).toBe("extends algo.grpo");
    expect(algorithm.children!.map((c) => c.name)).toEqual(["advantage"]);
    expect(demo.selectionRange.start).toEqual(positionOf(MAIN, "experiment demo", 11));
    const env = demo.children![1]!;
    expect(env.children!.map((c) => c.name)).toEqual(["split"]);
  });

  it("lists what the parser recovered in a broken document", async () => {
    const text = `experiment e {\n  policy { model: }\n  algorithm {\n    advantage {\n`;
    const uri = await openDoc(text);
    const symbols = await client.symbols(uri);
    expect(symbols[0]?.name).toBe("experiment e");
    expect(symbols[0]?.children?.map((c) => c.name)).toEqual(["policy", "algorithm"]);
  });
});

describe("formatting", () => {
  it("formats with the canonical formatter", async () => {
    const messy = `import "std/algorithms" as algo\nexperiment   e {\n      policy { model: "builtin:tiny",  }\n\n\n\n  algorithm extends algo.grpo {group_size:4}\n}`;
    const uri = await openDoc(messy);
    const edits = await client.formatting(uri);
    expect(edits.length).toBeGreaterThan(0);
    const expected = format(messy, specs.path("x.arl"));
    expect("output" in expected).toBe(true);
    expect(applyEdits(messy, edits)).toBe((expected as { output: string }).output);
  });

  it("makes no edits to a formatted file or to one with syntax errors", async () => {
    const formatted = (format(MAIN, "x.arl") as { output: string }).output;
    const uri = await openDoc(formatted);
    expect(await client.formatting(uri)).toEqual([]);
    const broken = `experiment   e {\n  policy { model: \n`;
    expect(await client.formatting(await openDoc(broken))).toEqual([]);
  });
});

describe("code actions", () => {
  it("applies a 'did you mean' to a misspelt field and a misspelt value", async () => {
    const text = MAIN.replace("max_turns: 8", "max_turn: 8").replace("baseline: mean", "baseline: meen");
    const uri = await openDoc(text);
    const published = client.publishedFor(uri).at(-1)!;
    const unknown = published.diagnostics.find((d) => d.code === "unknown-field")!;
    expect(unknown.relatedInformation?.map((r) => r.message)).toContain("hint: did you mean 'max_turns'?");
    const actions = await client.codeActions(uri, unknown.range, [unknown]);
    const fix = actions.find((a) => a.title === "Change to 'max_turns'");
    expect(fix?.isPreferred).toBe(true);
    expect(fix?.diagnostics?.[0]?.code).toBe("unknown-field");
    const fixed = applyEdits(text, fix!.edit!.changes![uri]!);
    expect(fixed).toContain("max_turns: 8");

    const invalid = published.diagnostics.find((d) => d.code === "invalid-enum")!;
    const enumFix = (await client.codeActions(uri, invalid.range)).find((a) => a.title === "Change to 'mean'");
    expect(applyEdits(text, enumFix!.edit!.changes![uri]!)).toContain("baseline: mean }");
  });

  it("replaces only the last segment of a misspelt signal", async () => {
    const text = MAIN.replace("outcome.tests_passed", "outcome.tests_pased");
    const uri = await openDoc(text);
    const d = client
      .publishedFor(uri)
      .at(-1)!
      .diagnostics.find((x) => x.code === "unknown-signal")!;
    const fix = (await client.codeActions(uri, d.range)).find((a) => a.title.startsWith("Change to"));
    expect(applyEdits(text, fix!.edit!.changes![uri]!)).toContain("success: 1.0 * outcome.tests_passed\n");
  });

  it("adds an allow entry for a lint finding, creating the block or extending it", async () => {
    const uri = await openDoc(MAIN, "allow-new.arl");
    const lint = client
      .publishedFor(uri)
      .at(-1)!
      .diagnostics.find((d) => d.code === "self-inclusive-baseline")!;
    const action = (await client.codeActions(uri, lint.range)).find((a) =>
      a.title.startsWith("Allow 'self-inclusive-baseline'"),
    );
    expect(action?.title).toContain("experiment 'demo'");
    const withAllow = applyEdits(MAIN, action!.edit!.changes![uri]!);
    expect(withAllow).toContain(
      '  allow { self-inclusive-baseline: "TODO: say why this rule does not apply here" }\n}\n\nexperiment other',
    );
    const next = client.nextDiagnostics(uri);
    await client.change(uri, withAllow);
    const after = await next;
    expect(after.diagnostics.map((d) => d.code)).not.toContain("self-inclusive-baseline");
    expect(after.diagnostics.map((d) => d.code)).not.toContain("unused-allow");

    // An existing allow block (several lines) gets one more line.
    const existing = MAIN.replace(
      "  algorithm extends algo.grpo {",
      '  allow {\n    group-size-one: "checked"\n  }\n\n  algorithm extends algo.grpo {',
    );
    const uri2 = await openDoc(existing);
    const lint2 = client
      .publishedFor(uri2)
      .at(-1)!
      .diagnostics.find((d) => d.code === "self-inclusive-baseline")!;
    const action2 = (await client.codeActions(uri2, lint2.range)).find((a) => a.title.startsWith("Allow"));
    expect(applyEdits(existing, action2!.edit!.changes![uri2]!)).toContain(
      '  allow {\n    group-size-one: "checked"\n    self-inclusive-baseline: "TODO: say why this rule does not apply here"\n  }',
    );
  });
});

describe("rename", () => {
  it("renames a declaration in its file and in the files importing it", async () => {
    const prepared = await client.prepareRename(libUri(), positionOf(LIB, "env small", 5));
    expect(prepared).toMatchObject({ placeholder: "small", range: { start: positionOf(LIB, "env small", 4) } });
    const edit = await client.rename(libUri(), positionOf(LIB, "env small", 5), "tiny");
    // lib.arl, main.arl, and the other files of the folder that import lib.arl (copies of main.arl).
    const changed = Object.keys(edit!.changes!);
    expect(changed).toEqual(expect.arrayContaining([libUri(), mainUri()]));
    for (const uri of changed)
      if (uri !== libUri()) expect(readFileSync(fileURLToPath(uri), "utf8")).toContain('import "./lib" as lib');
    expect(applyEdits(LIB, edit!.changes![libUri()]!)).toContain("env tiny extends fm.task");
    expect(applyEdits(MAIN, edit!.changes![mainUri()]!)).toContain("env shared extends lib.tiny {}");
  });

  it("renames from a reference, including tool references", async () => {
    const edit = await client.rename(mainUri(), positionOf(MAIN, "lib.lookup", 5), "define");
    expect(applyEdits(MAIN, edit!.changes![mainUri()]!)).toContain("tools: [shared.tools, lib.define]");
    expect(applyEdits(LIB, edit!.changes![libUri()]!)).toContain("tool define {");
  });

  it("renames within one file and refuses stdlib declarations and bad names", async () => {
    const text = `algorithm mine {\n  group_size: 4\n}\nexperiment e {\n  policy { model: "builtin:tiny" }\n  algorithm extends mine {}\n}\nexperiment f extends e {}\n`;
    const uri = await openDoc(text);
    const edit = await client.rename(uri, positionOf(text, "extends mine", 8), "yours");
    const renamed = applyEdits(text, edit!.changes![uri]!);
    expect(renamed).toContain("algorithm yours {");
    expect(renamed).toContain("algorithm extends yours {}");
    const exp = await client.rename(uri, positionOf(text, "experiment e {", 11), "base");
    expect(applyEdits(text, exp!.changes![uri]!)).toContain("experiment f extends base {}");
    await expect(client.prepareRename(mainUri(), positionOf(MAIN, "algo.grpo", 6))).rejects.toThrow(/stdlib/);
    await expect(client.rename(uri, positionOf(text, "mine {", 1), "not")).rejects.toThrow(/not a valid name/);
  });
});
