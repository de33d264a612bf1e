// The cold start on the spec's own chat records (rollout.sft.data): the file is hashed into the
// plan, bad records are reported by file:line before anything trains, assistant turns are the
// only targets, and a held-out share of the records measures the loss after each epoch.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { envKinds } from "../../src/envs/registry.js";
import { lowerModel } from "../../src/plan/lower.js";
import type { Plan } from "../../src/plan/schema.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { loadSftData, parseSftRecords, SftDataError, sftDataSource } from "../../src/runtime/run/cold-start/data.js";
import { heldoutCount } from "../../src/runtime/run/cold-start/records.js";
import { scriptedTrainerScript, embeddedTrainer } from "../helpers/plans.js";

const scripted = { file: process.execPath, args: [scriptedTrainerScript] };

const specWith = (sft: string) => `
import "std/envs/rooms" as rooms

experiment own_data {
  policy { model: "builtin:tiny", sampling { max_new_tokens: 16 } }
  env quest extends rooms.world { tasks: 20 }
  harness { tools: quest.tools, format: text_action, max_turns: 2 }
  reward { success: outcome.success }
  algorithm { group_size: 2, advantage { baseline: leave_one_out } }
  rollout { tasks_per_batch: 2, iterations: 1, sft { ${sft} } }
  eval { every: 1, tasks: 2, before_training: false }
}
`;

const record = (user: string, answer: string) =>
  JSON.stringify({
    messages: [
      { role: "system", content: "You add numbers." },
      { role: "user", content: user },
      { role: "assistant", content: answer },
    ],
  });

/** `n` small arithmetic records, one a line. */
function arithmetic(n: number): string {
  return (
    Array.from({ length: n }, (_, i) =>
      record(`add ${i % 7} and ${(i * 3) % 5}`, `the sum is ${(i % 7) + ((i * 3) % 5)}`),
    ).join("\n") + "\n"
  );
}

/** Writes the spec and its record file into a fresh folder; returns the compile result. */
function compileIn(sft: string, records: string | null) {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-sft-data-"));
  if (records !== null) writeFileSync(path.join(dir, "records.jsonl"), records);
  const file = path.join(dir, "spec.arl");
  writeFileSync(file, specWith(sft));
  const result = new Compiler().check(file);
  const lowered = result.model ? lowerModel(result.model) : { plans: [], diagnostics: [] };
  const diagnostics = [...result.diagnostics, ...lowered.diagnostics];
  return { dir, diagnostics, plan: lowered.plans[0]?.plan };
}

function compiled(sft: string, records: string): { dir: string; plan: Plan } {
  const { dir, plan, diagnostics } = compileIn(sft, records);
  const errors = diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0 || !plan) throw new Error(errors.map((e) => `${e.range.start.line}: ${e.message}`).join("\n"));
  return { dir, plan };
}

describe("rollout.sft.data in the plan", () => {
  it("records the file by its path and sha256, resolves the held-out default, and hashes the bytes", () => {
    const a = compiled('data: "./records.jsonl", epochs: 2', arithmetic(10));
    expect(a.plan.rollout.sft).toMatchObject({ demos: null, data: { path: "records.jsonl" }, heldout: 0.1, epochs: 2 });
    const same = compiled('data: "./records.jsonl", epochs: 2', arithmetic(10));
    expect(same.plan.hash).toBe(a.plan.hash);
    const changed = compiled('data: "./records.jsonl", epochs: 2', arithmetic(11));
    expect(changed.plan.hash).not.toBe(a.plan.hash);
    expect(changed.plan.rollout.sft?.data?.sha256).not.toBe(a.plan.rollout.sft?.data?.sha256);
    // Walkthroughs only: no file, nothing held out.
    expect(compiled("demos: 3", "").plan.rollout.sft).toMatchObject({ demos: 3, data: null, heldout: 0 });
  });

  it("reports a missing file at the path the spec wrote, and a cold start with nothing to train on", () => {
    const missing = compileIn('data: "./nowhere.jsonl"', null);
    const notFound = missing.diagnostics.find((d) => d.code === "data-file-not-found");
    expect(notFound?.message).toMatch(/'rollout\.sft\.data': cannot read the data file '\.\/nowhere\.jsonl'/);
    expect(notFound?.range.start.line).toBe(
      specWith("")
        .split("\n")
        .findIndex((l) => l.includes("sft {")) + 1,
    );
    expect(notFound?.hint).toMatch(/relative to the spec file/);
    const outside = compileIn('data: "../elsewhere.jsonl"', null);
    expect(outside.diagnostics.map((d) => d.code)).toContain("data-file-outside-root");
    const empty = compileIn("epochs: 2", null);
    const nothing = empty.diagnostics.find((d) => d.severity === "error");
    expect(nothing?.message).toBe(
      "'rollout.sft': the cold start needs something to train on, and this block names neither demos nor data",
    );
    expect(nothing?.hint).toMatch(/give demos .*, data .*, or both/);
    expect(nothing?.range.start.line).toBe(
      specWith("")
        .split("\n")
        .findIndex((l) => l.includes("sft {")) + 1,
    );
  });
});

describe("record validation", () => {
  it("names every bad line and what is wrong with it", () => {
    const lines = [
      record("add 1 and 2", "3"),
      "{not json",
      JSON.stringify({
        messages: [
          { role: "bot", content: "hi" },
          { role: "assistant", content: "x" },
        ],
      }),
      JSON.stringify({ messages: [{ role: "user", content: "only a question" }] }),
      "",
      JSON.stringify({
        messages: [
          { role: "user", content: "look" },
          {
            role: "assistant",
            content: null,
            tool_calls: [{ type: "function", function: { name: "search", arguments: "{}" } }],
          },
        ],
        tools: [{ type: "function", function: { name: "open" } }],
      }),
      JSON.stringify({
        messages: [
          { role: "user", content: "go" },
          {
            role: "assistant",
            content: "",
            tool_calls: [{ type: "function", function: { name: "open", arguments: "{oops" } }],
          },
        ],
        tools: [{ type: "function", function: { name: "open" } }],
      }),
      JSON.stringify({
        messages: [
          { role: "user", content: [{ type: "text" }] },
          { role: "assistant", content: "x" },
        ],
      }),
    ];
    const { records, problems } = parseSftRecords(lines.join("\n"));
    expect(records.map((r) => r.line)).toEqual([1]);
    expect(problems.map((p) => p.line)).toEqual([2, 3, 4, 6, 7, 8]);
    expect(problems[0]!.message).toMatch(/^not a JSON line/);
    expect(problems[1]!.message).toBe('messages[0]: unknown role "bot" (system, user, assistant or tool)');
    expect(problems[2]!.message).toMatch(/^no assistant turn/);
    expect(problems[3]!.message).toBe(
      "messages[1]: tool_calls[0]: calls 'search', which is not in the record's tools (open)",
    );
    expect(problems[4]!.message).toMatch(/arguments of 'open' are a string that is not JSON/);
    expect(problems[5]!.message).toBe('messages[0]: "content" must be a string');
  });

  it("turns OpenAI tool calls into the protocol's {name, arguments}", () => {
    const line = JSON.stringify({
      messages: [
        { role: "user", content: "open the box" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ type: "function", function: { name: "open", arguments: '{"what":"box"}' } }],
        },
        { role: "tool", content: "opened" },
        { role: "assistant", content: "done" },
      ],
      tools: [{ type: "function", function: { name: "open", parameters: { type: "object" } } }],
    });
    const [parsed] = parseSftRecords(line).records;
    expect(parsed!.messages[1]).toEqual({
      role: "assistant",
      content: "",
      tool_calls: [{ name: "open", arguments: { what: "box" } }],
    });
    expect(parsed!.tools).toHaveLength(1);
  });

  it("refuses a file whose bytes changed since compiling, and lists bad lines with file:line", () => {
    const { dir, plan } = compiled('data: "./records.jsonl"', arithmetic(4));
    const file = sftDataSource(plan)!;
    expect(loadSftData(file, dir).records).toHaveLength(4);
    writeFileSync(path.join(dir, "records.jsonl"), `${arithmetic(4)}{"messages": []}\n`);
    expect(() => loadSftData(file, dir)).toThrow(/has sha256 [0-9a-f]{64}, but the plan was compiled against/);
    const bad = compiled('data: "./records.jsonl"', `${arithmetic(2)}{"messages": []}\n`);
    expect(() => loadSftData(sftDataSource(bad.plan)!, bad.dir)).toThrow(SftDataError);
    expect(() => loadSftData(sftDataSource(bad.plan)!, bad.dir)).toThrow(
      /1 invalid record; nothing was trained:\n {2}records\.jsonl:3: "messages" must be a non-empty array/,
    );
  });

  it("holds out at least one record when asked, never all", () => {
    expect([
      heldoutCount(1, 0.1),
      heldoutCount(2, 0.1),
      heldoutCount(10, 0.1),
      heldoutCount(10, 0.25),
      heldoutCount(10, 0),
      heldoutCount(3, 0.9),
    ]).toEqual([0, 1, 1, 3, 0, 2]);
  });
});

describe("the cold start on records", () => {
  it("reports a bad record at run start, before the trainer is configured", async () => {
    const { dir, plan } = compiled(
      'data: "./records.jsonl"',
      `${arithmetic(3)}{"messages": [{"role": "user", "content": "hi"}]}\n`,
    );
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-run-")), plan);
    const logs: string[] = [];
    await expect(
      executePlan({ plan, runDir, trainer: scripted, envs: envKinds, dataRoot: dir, log: (l) => logs.push(l) }),
    ).rejects.toThrow(/records\.jsonl:4: no assistant turn/);
    expect(logs.some((l) => l.startsWith("sft epoch"))).toBe(false);
  }, 60_000);

  it("trains on assistant tokens only, keeps the held-out records out of the steps, and reports both losses", async () => {
    const records = [
      JSON.stringify({
        messages: [
          { role: "system", content: "S" },
          { role: "user", content: "U1" },
          { role: "assistant", content: "A1" },
          { role: "tool", content: "T" },
          { role: "assistant", content: "A2" },
        ],
      }),
      ...Array.from({ length: 9 }, (_, i) =>
        JSON.stringify({
          messages: [
            { role: "user", content: `Q${i}` },
            { role: "assistant", content: `R${i}` },
          ],
        }),
      ),
    ].join("\n");
    const { dir, plan } = compiled('data: "./records.jsonl", heldout: 0.2, epochs: 2', records);
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-run-")), plan);
    const trainLog = path.join(mkdtempSync(path.join(tmpdir(), "arl-sft-log-")), "train.jsonl");
    const logs: string[] = [];
    const previous = process.env.DOUBLE_TRAIN_LOG;
    process.env.DOUBLE_TRAIN_LOG = trainLog;
    try {
      await executePlan({ plan, runDir, trainer: scripted, envs: envKinds, dataRoot: dir, log: (l) => logs.push(l) });
    } finally {
      if (previous === undefined) delete process.env.DOUBLE_TRAIN_LOG;
      else process.env.DOUBLE_TRAIN_LOG = previous;
    }
    // The double encodes a message as "<role>content" code points: the masked positions spell the assistant turns.
    const steps = readFileSync(trainLog, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { ids: number[][]; loss_mask: number[][] });
    const sftSteps = steps.slice(0, 2);
    const targets = (s: { ids: number[][]; loss_mask: number[][] }) =>
      s.ids.map((ids, i) => String.fromCodePoint(...ids.filter((_, k) => s.loss_mask[i]![k] === 1)));
    const texts = targets(sftSteps[0]!);
    expect(texts).toHaveLength(8);
    expect(new Set(texts).size).toBe(8);
    for (const t of texts) expect(t).toMatch(/^(<assistant>A1<assistant>A2|<assistant>R\d)$/);
    // Both epochs train on the same records (full batch), none of them held out.
    expect(targets(sftSteps[1]!)).toEqual(targets(sftSteps[0]!));
    const lines = logs.filter((l) => l.startsWith("sft epoch"));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^sft epoch 1\/2: 8 demos in 1 step, negative log-likelihood [\d.]+ per token, held-out [\d.]+ on 2 records$/,
    );
    expect(logs).toContain("sft: trained on 0 walkthroughs and 8 records (2 held out)");
    const [first] = runDir.readMetrics();
    expect(first!.sft).toMatchObject({ demos: 0, records: 8, heldout_records: 2, truncated: 0, skipped: 0 });
    expect((first!.sft as { epochs: unknown[] }).epochs).toHaveLength(2);
    expect(runDir.readState().sft?.epochs.map((e) => e.epoch)).toEqual([1, 2]);
  }, 60_000);

  it("truncates records longer than harness.max_total_tokens with a counted warning and skips those left without a target", async () => {
    const long = JSON.stringify({
      messages: [
        { role: "user", content: "x".repeat(60) },
        { role: "assistant", content: "late answer" },
      ],
    });
    const short = JSON.stringify({
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: "a long answer that is cut" },
      ],
    });
    const { dir, plan } = compiled('data: "./records.jsonl", heldout: 0', [long, short, short].join("\n"));
    const limited: Plan = { ...plan, harness: { ...plan.harness, max_total_tokens: 20 } };
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-run-")), limited);
    const logs: string[] = [];
    await executePlan({
      plan: limited,
      runDir,
      trainer: scripted,
      envs: envKinds,
      dataRoot: dir,
      log: (l) => logs.push(l),
    });
    expect(logs).toContain(
      "sft data: warning: 3 of 3 records are longer than harness.max_total_tokens (20) and were truncated to it; 1 of them had no assistant token left and is not trained on",
    );
    expect(runDir.readMetrics()[0]!.sft).toMatchObject({ records: 2, truncated: 3, skipped: 1 });
  }, 60_000);

  it("lowers the held-out loss over epochs with the embedded model, and a resumed run does not repeat the cold start", async () => {
    const { dir, plan } = compiled(
      'data: "./records.jsonl", heldout: 0.2, epochs: 4, batch: 4, lr: 1e-2',
      arithmetic(30),
    );
    const two: Plan = { ...plan, rollout: { ...plan.rollout, iterations: 2 } };
    const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-sft-run-")), two);
    const stop = new AbortController();
    const logs: string[] = [];
    const first = await executePlan({
      plan: two,
      runDir,
      trainer: embeddedTrainer,
      envs: envKinds,
      dataRoot: dir,
      log: (l) => logs.push(l),
      stop: stop.signal,
      progress: () => stop.abort(),
    });
    expect(first).toMatchObject({ iterations: 1, stopped: true });
    const epochs = runDir.readState().sft!.epochs;
    expect(epochs).toHaveLength(4);
    const heldout = epochs.map((e) => e.heldout_nll!);
    expect(heldout.at(-1)!).toBeLessThan(heldout[0]!);
    expect(epochs.at(-1)!.train_nll).toBeLessThan(epochs[0]!.train_nll);
    // Resumed: the same vocabulary (records included) loads checkpoint 1; no cold start again.
    const resumedLogs: string[] = [];
    const resumed = await executePlan({
      plan: two,
      runDir: RunDirectory.open(runDir.dir),
      trainer: embeddedTrainer,
      envs: envKinds,
      dataRoot: dir,
      log: (l) => resumedLogs.push(l),
    });
    expect(resumed.iterations).toBe(2);
    expect(resumedLogs.some((l) => l.startsWith("sft"))).toBe(false);
    expect(runDir.readMetrics().map((m) => m.sft === undefined)).toEqual([false, true]);
  }, 180_000);
});
