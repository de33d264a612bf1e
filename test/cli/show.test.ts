// `arl show`: a tiny run (builtin:tiny on the embedded trainer, the rooms quest with tools) read
// back from its token buffer as text and JSON lines, its filters, token text from the
// checkpoint's vocabulary, records without messages, and what bad input gets.
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { readBuffer, TokenBuffer } from "../../src/episode/buffer.js";
import { runArl } from "../helpers/cli.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const embedded = `${process.execPath} ${path.join(repo, "dist", "trainer", "embedded", "main.js")}`;

const spec = `
import "std/envs/rooms" as rooms

experiment shown {
  seed: 5
  policy { model: "builtin:tiny?hidden=16&embed=8&key=8", sampling { max_new_tokens: 8 } }
  env quest extends rooms.world { tasks: 10 }
  harness { tools: quest.tools, format: text_action, max_turns: 2 }
  reward { success: outcome.success }
  algorithm { group_size: 2, advantage { baseline: leave_one_out } }
  rollout { tasks_per_batch: 2, iterations: 2 }
  eval { every: 2, tasks: 1, before_training: false }
}
`;

let cwd = "";
let runDir = "";

function findRunDir(base: string): string {
  const dir = path.join(base, "shown", "default");
  const [only] = readdirSync(dir);
  return path.join(dir, only!);
}

beforeAll(async () => {
  cwd = mkdtempSync(path.join(tmpdir(), "arl-show-"));
  writeFileSync(path.join(cwd, "spec.arl"), spec);
  const run = await runArl(["run", "spec.arl", "--out", "runs", "--trainer-command", embedded], { cwd });
  expect(run.code, run.stderr).toBe(0);
  runDir = path.relative(cwd, findRunDir(path.join(cwd, "runs")));
}, 120_000);

const jsonLines = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("arl show", () => {
  it("prints the last iteration's first episodes as text, by role, with tool calls, and says how to see more", async () => {
    const r = await runArl(["show", runDir], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("== iteration 2, episode 0: env quest, task ");
    expect(r.stdout).toMatch(
      /end (finished|truncated); reward 0 \(success 0\); 2 turns, 2 tool calls; \d+ tokens; policy versions 1/,
    );
    for (const role of ["[system]", "[prompt]", "[generated]", "[observation]"]) expect(r.stdout).toContain(role);
    expect(r.stdout).toContain("  Your task: ");
    expect(r.stdout).toMatch(/-> tool call .+: (valid|error|blocked)/);
    expect(r.stdout.match(/^== iteration/gm)).toHaveLength(3);
    expect(r.stdout).not.toContain("\x1b[");
    expect(r.stderr).toContain(
      "note: showing 3 of the 4 episodes of iteration 2 (iterations 1-2 in the buffer); --limit 0 shows all",
    );
  });

  it("colours by role on a terminal only, and not with NO_COLOR", async () => {
    const tty = await runArl(["show", runDir, "--episode", "0"], { cwd, isTTY: true });
    expect(tty.stdout).toContain("\x1b[32m[generated]\x1b[0m");
    const noColor = await runArl(["show", runDir, "--episode", "0"], { cwd, isTTY: true, env: { NO_COLOR: "1" } });
    expect(noColor.stdout).not.toContain("\x1b[");
  });

  it("writes JSON lines with fixed keys that match the buffer, filtered by iteration, task and episode", async () => {
    const { records } = readBuffer(path.join(cwd, runDir, "buffer.arlbuf"));
    const first = records.filter((x) => x.iteration === 1);
    const all = await runArl(["show", runDir, "--iteration", "1", "--limit", "0", "--format", "json"], { cwd });
    expect(all.code, all.stderr).toBe(0);
    const lines = jsonLines(all.stdout);
    expect(lines).toHaveLength(first.length);
    expect(Object.keys((lines[0]!.spans as object[])[0]!)).toEqual([
      "role",
      "start",
      "end",
      "text",
      "text_source",
      "tool_calls",
    ]);
    expect(Object.keys(lines[0]!)).toEqual([
      "iteration",
      "episode",
      "env",
      "task",
      "group",
      "sample",
      "step",
      "end",
      "reward",
      "rewards",
      "turns",
      "policy_versions",
      "generators",
      "has_text",
      "later_messages",
      "spans",
      "tools",
    ]);
    expect(lines.map((l) => [l.task, l.group, l.sample, l.episode])).toEqual(
      first.map((x, i) => [x.task, x.group, x.sample, i]),
    );
    const spans = lines[0]!.spans as { role: string; start: number; end: number; text: string | null }[];
    expect(spans.map((s) => s.role)).toEqual([
      "system",
      "prompt",
      "generated",
      "observation",
      "generated",
      "observation",
    ]);
    expect(spans.map((s) => s.text)).toEqual(first[0]!.messages!.map((m) => m.content));
    expect(spans.at(-1)!.end).toBe(first[0]!.ids.length);

    const task = first[2]!.task;
    const byTask = jsonLines(
      (await runArl(["show", runDir, "--iteration", "1", "--task", String(task), "--format", "json"], { cwd })).stdout,
    );
    expect(byTask.every((l) => l.task === task)).toBe(true);
    expect(byTask.map((l) => l.episode)).toEqual(first.flatMap((x, i) => (x.task === task ? [i] : [])));
    const byPair = jsonLines(
      (await runArl(["show", runDir, "--iteration", "1", "--episode", "1/0", "--format", "json"], { cwd })).stdout,
    );
    expect(byPair.map((l) => [l.group, l.sample, l.episode])).toEqual([[1, 0, 2]]);
    const byIndex = jsonLines(
      (await runArl(["show", runDir, "--iteration", "1", "--episode", "3", "--format", "json"], { cwd })).stdout,
    );
    expect(byIndex.map((l) => [l.group, l.sample])).toEqual([[1, 1]]);
  });

  it("--tokens gives every token's id, version, log-probability and, for builtin:tiny, its text", async () => {
    const { records } = readBuffer(path.join(cwd, runDir, "buffer.arlbuf"));
    const last = records.filter((x) => x.iteration === 2)[0]!;
    const json = jsonLines(
      (await runArl(["show", runDir, "--episode", "0", "--format", "json", "--tokens"], { cwd })).stdout,
    );
    const tokens = json[0]!.tokens as {
      ids: number[];
      roles: string[];
      versions: number[];
      logprobs: number[];
      advantages: number[] | null;
      text: string[];
    };
    expect(tokens.ids).toEqual(Array.from(last.ids));
    expect(tokens.versions).toEqual(Array.from(last.versions));
    expect(tokens.logprobs).toEqual(Array.from(last.logprobs));
    expect(tokens.roles.filter((r) => r === "generated").length).toBe(last.versions.filter((v) => v >= 0).length);
    expect(tokens.text).toHaveLength(last.ids.length);
    // The advantages the update trained with: 0 off the generated tokens, one value over an
    // episode's generated tokens (an outcome reward), and with a leave-one-out baseline over a
    // group of two, the two episodes' values are opposite, signed as their rewards differ.
    expect(tokens.advantages).toEqual(Array.from(last.advantages!));
    const advantageOf = (r: (typeof records)[number]) => {
      const values = new Set(Array.from(r.roles).flatMap((role, i) => (role === 2 ? [r.advantages![i]!] : [])));
      expect(Array.from(r.roles).every((role, i) => role === 2 || r.advantages![i] === 0)).toBe(true);
      expect(values.size).toBe(1);
      return [...values][0]!;
    };
    const mate = records.find((x) => x.iteration === 2 && x.group === last.group && x.sample !== last.sample)!;
    expect(advantageOf(last)).toBeCloseTo(-advantageOf(mate), 6);
    expect(Math.sign(advantageOf(last))).toBe(Math.sign(last.reward - mate.reward));
    // The prompt's words are in the vocabulary: its role marker, then one token per word.
    const prompt = tokens.roles.indexOf("prompt");
    expect(tokens.text.slice(prompt, prompt + 4)).toEqual(["<user>", "Your", "task", ":"]);
    const text = await runArl(["show", runDir, "--episode", "0", "--tokens"], { cwd });
    expect(text.stdout).toContain(
      "and the token as builtin:tiny's tokenizer, rebuilt from checkpoints/iteration-00002/trainer.json; on generated tokens of a record the update trained on, the advantage it was trained with",
    );
    const g = last.roles.indexOf(2);
    expect(text.stdout).toContain(
      `${String(g).padStart(6)}  id ${String(last.ids[g]).padStart(7)}  version   1  logprob ${last.logprobs[g]!.toFixed(4)}  advantage ${last.advantages![g]!.toFixed(4)}  ${JSON.stringify(tokens.text[g])}`,
    );
  });

  it("decodes a record without messages through the checkpoint's tokenizer, and says so when there is none", async () => {
    const copy = path.join(cwd, "old");
    cpSync(path.join(cwd, runDir), copy, { recursive: true });
    const buffer = path.join(copy, "buffer.arlbuf");
    const { records } = readBuffer(buffer);
    rmSync(buffer);
    const old = new TokenBuffer(buffer);
    old.append(records.map(({ messages: _m, tools: _t, ...rest }) => rest));
    old.close();
    const decoded = await runArl(["show", "old", "--episode", "0", "--format", "json"], { cwd });
    const spans = jsonLines(decoded.stdout)[0]!.spans as { role: string; text: string; text_source: string }[];
    expect(spans.every((s) => s.text_source === "decoded")).toBe(true);
    expect(spans[1]!.text).toMatch(/^Your task: /);
    expect((await runArl(["show", "old", "--episode", "0"], { cwd })).stdout).toContain("[prompt] ");
    rmSync(path.join(copy, "checkpoints"), { recursive: true });
    const bare = await runArl(["show", "old", "--episode", "0", "--tokens"], { cwd });
    expect(bare.code).toBe(0);
    expect(bare.stdout).toContain("[generated] ");
    expect(bare.stdout).toContain("(no text: see the note)");
    expect(bare.stdout).toContain(
      "note: this record carries no messages (written by an older arl); only token ids are stored, and their text needs the run's tokenizer",
    );
    expect(bare.stdout).toContain(
      "(no token text: the run has no checkpoint yet, and token text needs the run's tokenizer)",
    );
  });

  it("prints a step-wise episode (history rerender) as one record per model call, each with its part of the conversation", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-show-rerender-"));
    writeFileSync(
      path.join(dir, "spec.arl"),
      spec.replace("max_turns: 2 }", "max_turns: 2, context { history: rerender } }"),
    );
    const run = await runArl(["run", "spec.arl", "--out", "runs", "--trainer-command", embedded], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const rerun = path.relative(dir, findRunDir(path.join(dir, "runs")));
    const lines = jsonLines((await runArl(["show", rerun, "--episode", "0", "--format", "json"], { cwd: dir })).stdout);
    const spans = lines.map((l) => (l.spans as { role: string; text: string | null }[]).map((s) => s.role));
    expect(lines.map((l) => [l.episode, l.step, l.has_text, l.later_messages])).toEqual([
      [0, 0, true, 3],
      [0, 1, true, 1],
    ]);
    expect(spans).toEqual([
      ["system", "prompt", "generated"],
      ["system", "prompt", "rendered", "observation", "generated"],
    ]);
    const text = await runArl(["show", rerun, "--episode", "0"], { cwd: dir });
    expect(text.stdout).toContain("step 0 (model call 1 of the episode)");
    expect(text.stdout).toContain("[rendered] ");
    expect(text.stdout).toContain(
      "note: the conversation goes on for 3 more messages, not in this record's tokens (the next steps' records hold them)",
    );
  }, 120_000);

  it("puts the last iteration's best, median and worst episode in the report", async () => {
    const { records } = readBuffer(path.join(cwd, runDir, "buffer.arlbuf"));
    const last = records.filter((x) => x.iteration === 2);
    const out = path.join(cwd, "report");
    const report = await runArl(["report", runDir, "--out", "report"], { cwd });
    expect(report.code, report.stderr).toBe(0);
    const md = readFileSync(path.join(out, "report.md"), "utf8");
    const rows = md
      .split("## Sample trajectories")[1]!
      .split("\n")
      .filter((l) => /^\| (best|median|worst) \|/.test(l));
    // All rewards are 0 here: ties go in episode order, so the best is the last episode, the median and worst the first ones.
    expect(rows.map((l) => l.split("|")[1]!.trim() + " " + l.split("|")[3]!.trim())).toEqual([
      `best ${last.length - 1}`,
      `median ${Math.floor((last.length - 1) / 2)}`,
      "worst 0",
    ]);
    const html = readFileSync(path.join(out, "report.html"), "utf8");
    expect(html).toContain('<a href="#samples">Sample trajectories</a>');
    expect(html).toMatch(
      /<details><summary>best: reward 0\.000, task \d+, episode 3 \((finished|truncated), 2 turns\)<\/summary><pre class="mono trajectory">== iteration 2, episode 3: env quest/,
    );
  });

  it("shows a turn cut off by its token budget, which never becomes a message, decoded from its ids", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-show-budget-"));
    writeFileSync(
      path.join(dir, "spec.arl"),
      spec.replace("max_turns: 2 }", "max_turns: 2, max_response_tokens: 8, on_budget: truncate }"),
    );
    const run = await runArl(["run", "spec.arl", "--out", "runs", "--trainer-command", embedded], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const cut = path.relative(dir, findRunDir(path.join(dir, "runs")));
    const { records } = readBuffer(path.join(dir, cut, "buffer.arlbuf"));
    const first = records.filter((x) => x.iteration === 2)[0]!;
    expect(first.messages!.map((m) => m.role)).toEqual(["system", "user"]);
    const [line] = jsonLines((await runArl(["show", cut, "--episode", "0", "--format", "json"], { cwd: dir })).stdout);
    const spans = line!.spans as { role: string; text: string; text_source: string }[];
    expect(spans.map((s) => [s.role, s.text_source])).toEqual([
      ["system", "messages"],
      ["prompt", "messages"],
      ["generated", "decoded"],
    ]);
    expect(spans[2]!.text.length).toBeGreaterThan(0);
    const text = await runArl(["show", cut, "--episode", "0"], { cwd: dir });
    expect(text.stdout).toContain("[generated] 8 tokens (text decoded from the ids)");
    expect(text.stdout).toContain(
      "note: the last span has no recorded message (a turn cut off by its token budget is not added to the conversation); its text is decoded from the ids",
    );
    expect(text.stdout).not.toContain("do not line up");
  }, 120_000);

  it("reads what a crash left: the complete records, with a note on the partial one", async () => {
    const copy = path.join(cwd, "crashed");
    cpSync(path.join(cwd, runDir), copy, { recursive: true });
    const buffer = path.join(copy, "buffer.arlbuf");
    truncateSync(buffer, statSync(buffer).size - 7);
    const r = await runArl(["show", "crashed", "--iteration", "2", "--limit", "0", "--format", "json"], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /note: crashed\/buffer\.arlbuf ends in a partial record of \d+ bytes \(a crash while writing it\); showing the 7 complete records before it/,
    );
    expect(jsonLines(r.stdout)).toHaveLength(3);
  });

  it("refuses bad input with a message and the exit codes of the other commands", async () => {
    const notRun = await runArl(["show", "nowhere"], { cwd });
    expect([notRun.code, notRun.stderr]).toEqual([
      2,
      "arl show: 'nowhere' does not exist; give the run directory that 'arl run' printed (OUT/<experiment>/<variant>/<hash>-<time>)\n",
    ]);
    const plain = await runArl(["show", "."], { cwd });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain("is not a run directory (it has no plan.json)");

    const empty = path.join(cwd, "empty");
    mkdirSync(empty);
    copyFileSync(path.join(cwd, runDir, "plan.json"), path.join(empty, "plan.json"));
    writeFileSync(path.join(empty, "buffer.arlbuf"), "");
    const none = await runArl(["show", "empty"], { cwd });
    expect([none.code, none.stderr]).toEqual([1, "arl show: empty/buffer.arlbuf holds no complete trajectory yet\n"]);

    const iteration = await runArl(["show", runDir, "--iteration", "9"], { cwd });
    expect([iteration.code, iteration.stderr]).toEqual([
      1,
      "arl show: iteration 9 is not in the buffer; it holds iterations 1-2\n",
    ]);
    const episode = await runArl(["show", runDir, "--episode", "7"], { cwd });
    expect([episode.code, episode.stderr]).toEqual([
      1,
      "arl show: iteration 2 has no episode 7; it has episodes 0-3\n",
    ]);
    const badEpisode = await runArl(["show", runDir, "--episode", "first"], { cwd });
    expect(badEpisode.code).toBe(2);
    expect(badEpisode.stderr).toContain(
      "--episode must be an episode number (0, 1, ...) or GROUP/SAMPLE (e.g. 1/0), not 'first'",
    );
    const badFormat = await runArl(["show", runDir, "--format", "yaml"], { cwd });
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toContain("--format must be text or json, not 'yaml'");
  });
});
