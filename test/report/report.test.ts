// `arl report` on run directories written in the runtime's formats: the page's sections and
// charts, the eval and comparison numbers, the markdown summary, partial runs, and the errors.
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { deriveSeed } from "../../src/contracts/random.js";
import { buildReport } from "../../src/report/index.js";
import { bootstrapMeanInterval } from "../../src/rl/eval.js";
import { runArl } from "../helpers/cli.js";
import { tempDir, writeRun } from "./fixtures.js";

const curveIds = [
  "success",
  "reward",
  "effective-group-ratio",
  "generated-length",
  "entropy",
  "clip-fraction",
  "kl",
  "policy-loss",
  "grad-norm",
  "tokens-per-second",
  "iteration-time",
];

function readJsonLines(file: string): Record<string, unknown>[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function ci(estimate: number, low: number, high: number): string {
  return `${estimate.toFixed(3)} [${low.toFixed(3)}, ${high.toFixed(3)}]`;
}

/** Every way a page could pull something from the network. */
function externalReferences(html: string): string[] {
  return [
    ...html.matchAll(/https?:\/\/[^\s"'<>)]*/g),
    ...html.matchAll(/<(script|link|iframe|img|object|embed)\b[^>]*>/gi),
    ...html.matchAll(/@import|url\(\s*['"]?(?!#)[^)]*\)/g),
    ...html.matchAll(/\s(src|srcset|xlink:href)\s*=/gi),
  ].map((m) => m[0]);
}

describe("arl report, one run", () => {
  it("writes a self-contained page with SVG learning curves, the eval table and the header, and a markdown summary", async () => {
    const cwd = tempDir();
    const dir = writeRun(path.join(cwd, "runs"), { planned: 6, gain: 0.1 });
    const rel = path.relative(cwd, dir);
    const run = await runArl(["report", rel], { cwd });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    // Default --out for one run: the run directory; the written paths are printed.
    expect(run.stdout).toBe(`${path.join(rel, "report.html")}\n${path.join(rel, "report.md")}\n`);
    const html = readFileSync(path.join(dir, "report.html"), "utf8");
    const md = readFileSync(path.join(dir, "report.md"), "utf8");

    // Sections.
    for (const id of ["runs", "summary", "curves", "eval", "time"]) expect(html).toContain(`<section id="${id}">`);
    expect(html).not.toContain('<section id="comparison">');
    // One inline SVG chart per learning curve, plus pass@k over evals.
    for (const id of curveIds)
      expect(html, id).toMatch(
        new RegExp(
          `<figure class="chart" id="fig-${id}"><svg role="img" aria-label="[^"]+"[^>]*>[\\s\\S]*?</svg></figure>`,
        ),
      );
    expect(html).toContain('aria-label="Reward per term"');
    expect(html).toContain('id="fig-eval-pass-1"');
    expect(html).toContain('id="fig-eval-pass-2"');
    // The curves, the two pass@k charts, and pass@1 again, large, in the result at the top.
    expect((html.match(/<svg\b/g) ?? []).length).toBe(curveIds.length + 3);
    // The reward chart names its terms (legend text in the SVG).
    const rewardSvg = /<figure class="chart" id="fig-reward">([\s\S]*?)<\/figure>/.exec(html)![1]!;
    expect(rewardSvg).toContain(">progress<");
    expect(rewardSvg).toContain(">success<");
    expect(rewardSvg).toContain(">total<");

    // Nothing from the network; no scripts.
    expect(externalReferences(html)).toEqual([]);

    // Header: experiment, variant, hash, seed, trainer, versions, wall time split.
    const plan = JSON.parse(readFileSync(path.join(dir, "plan.json"), "utf8"));
    expect(html).toContain(`<h1>counting / g4</h1>`);
    expect(html).toContain(plan.hash);
    expect(html).toContain("<dt>seed</dt><dd>3</dd>");
    expect(html).toContain("<dt>trainer</dt><dd>arl-torch 0.1.0</dd>");
    expect(html).toContain("arl 0.1.0, node v20.19.0, torch 2.5.1, transformers 4.46.0");
    expect(html).toContain("Qwen/Qwen2.5-0.5B-Instruct (494,032,768 parameters)");
    expect(html).toContain("algorithm.group_size = 4");
    expect(html).toContain("complete: 6 iterations");
    // Wall time: rollout 41.5+i, reward 0.75, update 12.25, total 61.5+i over i = 1..6.
    const rollout = 6 * 41.5 + 21;
    const total = 6 * 61.5 + 21;
    expect(html).toContain(
      `${Math.floor(rollout / 60)} min ${String(Math.round(rollout % 60)).padStart(2, "0")} s <span class="muted">(${((100 * rollout) / total).toFixed(1)}%)</span>`,
    );
    expect(html).toContain("4.50 s"); // reward: 6 x 0.75
    expect(html).toContain("1 min 14 s"); // update: 6 x 12.25 = 73.5

    // The eval table: every eval, pass@k with its interval, as metrics.jsonl recorded it.
    const metrics = readJsonLines(path.join(dir, "metrics.jsonl"));
    const evals = metrics
      .filter((m) => m.eval)
      .map((m) => ({ iteration: m.iteration as number, eval: m.eval as Record<string, number> }));
    expect(evals.map((e) => e.iteration)).toEqual([2, 4, 6]);
    for (const e of evals) {
      for (const k of [1, 2]) {
        const cell = ci(e.eval[`pass@${k}`]!, e.eval[`pass@${k}_low`]!, e.eval[`pass@${k}_high`]!);
        expect(html).toContain(`<td class="num">${cell}</td>`);
        expect(md).toContain(cell);
      }
    }
    // The eval before training exists only as a file: recomputed with the runtime's bootstrap.
    const before = readJsonLines(path.join(dir, "eval", "iteration-00000.jsonl"));
    const i0 = bootstrapMeanInterval(
      before.map((r) => r["pass@1"] as number),
      { seed: deriveSeed(3, "bootstrap", 0, 1), resamples: 2000 },
    );
    expect(html).toMatch(
      new RegExp(
        `<td class="num">0 \\(before training\\)</td><td class="num">8</td><td class="num">0</td><td class="num">${ci(i0.estimate, i0.low, i0.high).replace(/[[\]]/g, "\\$&")}</td>`,
      ),
    );

    // The markdown summary table.
    const last = metrics[metrics.length - 1]!;
    const final = evals[evals.length - 1]!.eval;
    expect(md).toContain("# arl report: counting / g4");
    expect(md).toContain("## Summary");
    expect(md).toContain(
      "| Run | Status | Seed | Last iteration | Success | Reward | Final pass@1 [95% CI] | Final pass@2 [95% CI] | Eval iteration | Wall time |",
    );
    expect(md).toContain(
      `| g4 | complete | 3 | 6 | ${(last.success as number).toFixed(3)} | ${(last.reward as number).toFixed(3)} | ${ci(final["pass@1"]!, final["pass@1_low"]!, final["pass@1_high"]!)} | ${ci(final["pass@2"]!, final["pass@2_low"]!, final["pass@2_high"]!)} | 6 |`,
    );
    expect(md).toContain(`- plan hash: \`${plan.hash}\``);
    expect(md).toContain("- trainer: arl-torch 0.1.0");
    expect(md).toMatch(/- wall time: .*rollout .*reward .*update /);
  });

  it("gives the same files for the same input", async () => {
    const dir = writeRun(tempDir());
    const a = await buildReport([dir], { cwd: "/", arlVersion: "0.1.0" });
    const b = await buildReport([dir], { cwd: "/", arlVersion: "0.1.0" });
    expect(b.html).toBe(a.html);
    expect(b.markdown).toBe(a.markdown);
    // Element ids stay unique across the page's SVGs even though vega numbers them per process.
    const ids = [...a.html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("shows eval/base.jsonl (the policy before the cold start) as the first row of the eval table", async () => {
    const dir = writeRun(tempDir());
    const rows = readFileSync(path.join(dir, "eval", "iteration-00000.jsonl"), "utf8");
    writeFileSync(
      path.join(dir, "eval", "base.jsonl"),
      rows.replace(/"correct":\d+/g, '"correct":0').replace(/"pass@(\d)":[\d.]+/g, '"pass@$1":0'),
    );
    const { html, model } = await buildReport([dir], { cwd: "/", arlVersion: "0.1.0" });
    expect(model.runs[0]!.evals.map((e) => e.iteration)).toEqual([-1, 0, 2, 4, 6]);
    const table = /<section id="eval">[\s\S]*?<\/section>/.exec(html)![0];
    expect(table.indexOf("base (before the cold start)")).toBeGreaterThan(-1);
    expect(table.indexOf("base (before the cold start)")).toBeLessThan(table.indexOf("0 (before training)"));
  });

  it("recomputes pass@k intervals from eval/*.jsonl when metrics.jsonl has no eval summaries, matching the runtime's", async () => {
    const recorded = await buildReport([writeRun(tempDir(), { metricsEval: true })], { cwd: "/", arlVersion: "0.1.0" });
    const recomputed = await buildReport([writeRun(tempDir(), { metricsEval: false })], {
      cwd: "/",
      arlVersion: "0.1.0",
    });
    const table = (html: string) =>
      /<section id="eval">[\s\S]*?<\/section>/.exec(html)![0].replace(/<td class="muted">[^<]*<\/td>/g, "");
    expect(table(recomputed.html)).toBe(table(recorded.html));
    expect(recomputed.html).toContain("eval/*.jsonl (recomputed)");
    expect(recomputed.model.runs[0]!.evals.map((e) => e.source)).toEqual([
      "recomputed",
      "recomputed",
      "recomputed",
      "recomputed",
    ]);
  });
});

describe("arl report, several runs", () => {
  it("compares variants side by side with paired per-task differences against the first run", async () => {
    const root = tempDir();
    const g4 = writeRun(root, { variant: "g4", gain: 0.1 });
    const g2 = writeRun(root, { variant: "g2", gain: 0.05, evalTasks: 6 });
    const cwd = tempDir("arl-report-cwd-");
    const run = await runArl(["report", g4, g2], { cwd });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    // Default --out for several runs: the directory that holds them (root/<experiment>), not the working directory.
    const out = path.join(root, "counting");
    expect(run.stdout).toBe(`${path.join(out, "report.html")}\n${path.join(out, "report.md")}\n`);
    expect(existsSync(path.join(cwd, "report"))).toBe(false);
    const html = readFileSync(path.join(out, "report.html"), "utf8");
    const md = readFileSync(path.join(out, "report.md"), "utf8");
    expect(html).toContain("<h1>counting: 2 runs</h1>");
    expect(html).toContain('<section id="comparison">');
    expect(externalReferences(html)).toEqual([]);

    // Side by side: each run's final pass@k with its interval.
    for (const [dir, label] of [
      [g4, "g4"],
      [g2, "g2"],
    ] as const) {
      const last = readJsonLines(path.join(dir, "metrics.jsonl"))
        .filter((m) => m.eval)
        .pop()!.eval as Record<string, number>;
      const cell = ci(last["pass@1"]!, last["pass@1_low"]!, last["pass@1_high"]!);
      expect(html).toMatch(
        new RegExp(
          `</span> ${label}( <span class="muted">\\(baseline\\)</span>)?</td><td><code>[0-9a-f]{12}</code></td><td class="num">3</td><td class="num">6</td><td class="num">${label === "g4" ? 8 : 6}</td><td class="num">${cell.replace(/[[\]]/g, "\\$&")}</td>`,
        ),
      );
      expect(md).toContain(cell);
    }

    // Paired differences over the 6 tasks both evaluated at iteration 6 (g2 minus g4).
    const rowsA = readJsonLines(path.join(g4, "eval", "iteration-00006.jsonl"));
    const rowsB = readJsonLines(path.join(g2, "eval", "iteration-00006.jsonl"));
    for (const k of [1, 2]) {
      const byTask = new Map(rowsA.map((r) => [r.task, r[`pass@${k}`] as number]));
      const diffs = rowsB.map((r) => (r[`pass@${k}`] as number) - byTask.get(r.task)!);
      expect(diffs).toHaveLength(6);
      const mean = diffs.reduce((s, d) => s + d, 0) / diffs.length;
      const row = new RegExp(
        `<tr class="[a-z]*"><td>g2</td><td class="num">${k}</td><td class="num">6</td><td class="num">6 / 6</td><td class="num">([-+]?\\d\\.\\d{3}) \\[([-+]?\\d\\.\\d{3}), ([-+]?\\d\\.\\d{3})\\]</td>`,
      ).exec(html);
      expect(row, `paired row for pass@${k}`).not.toBeNull();
      const [shown, low, high] = row!.slice(1).map(Number) as [number, number, number];
      expect(shown).toBeCloseTo(mean, 3);
      expect(low).toBeLessThanOrEqual(shown);
      expect(high).toBeGreaterThanOrEqual(shown);
      expect(md).toMatch(new RegExp(`\\| g2 \\| ${k} \\| 6 \\| 6 / 6 \\| ${row![1]!.replace("+", "\\+")} \\[`));
    }
    expect(html).toContain("Paired per-task differences against g4");
    expect(md).toContain("### Paired per-task differences against g4");
    expect(md).toContain("| Run | k | Tasks paired | Eval iterations | Mean difference [95% CI] | SE | Verdict |");
    // Curves overlay the runs: one line per run, named in the legend.
    const success = /<figure class="chart" id="fig-success">([\s\S]*?)<\/figure>/.exec(html)![1]!;
    expect(success).toContain(">g4<");
    expect(success).toContain(">g2<");
    expect(html).toContain('id="fig-reward-term-1"');
  });

  it("pairs no task of variants whose env names other tasks by the same ids, and still pairs one that only times it otherwise", async () => {
    const root = tempDir();
    const g4 = writeRun(root, { variant: "g4" });
    const otherEnv = writeRun(root, { variant: "g2", env: { command: ["python3", "other_counter.py"] } });
    const report = await buildReport([g4, otherEnv], { cwd: root, arlVersion: "0.1.0" });
    const rows = report.model.comparison!.rows;
    expect(rows.map((r) => [r.k, r.tasks, r.result])).toEqual([
      [1, 0, null],
      [2, 0, null],
    ]);
    expect(rows[0]!.reason).toMatch(
      /^not paired: a task id names another task here \(env 'counter' command \[.* vs \["python3","other_counter.py"\]\); compare the variants' pass@k over tasks instead$/,
    );
    expect(report.markdown).toContain("not paired: a task id names another task here");
    expect(report.html).toContain("other tasks, not paired");

    const slower = writeRun(tempDir(), { variant: "g2", env: { timeout_s: 120 } });
    const timed = await buildReport([g4, slower], { cwd: root, arlVersion: "0.1.0" });
    expect(timed.model.comparison!.rows.map((r) => [r.k, r.tasks, r.reason])).toEqual([
      [1, 8, undefined],
      [2, 8, undefined],
    ]);
  });

  it("compares a partial variant at its own last eval, and says so", async () => {
    const root = tempDir();
    const g4 = writeRun(root, { variant: "g4" });
    const g2 = writeRun(root, { variant: "g2", planned: 8, iterations: 5 });
    const report = await buildReport([g4, g2], { cwd: root, arlVersion: "0.1.0" });
    const rows = report.model.comparison!.rows;
    expect(rows.map((r) => [r.k, r.tasks, r.baselineIteration, r.iteration])).toEqual([
      [1, 8, 6, 4],
      [2, 8, 6, 4],
    ]);
    expect(report.html).toContain("g2 is compared at its last eval, iteration 4, and g4 at iteration 6");
    expect(report.html).toContain('<span class="badge partial">partial: 5 of 8 iterations</span>');
    expect(report.markdown).toContain("| g2 | partial (5/8) | 3 | 5 |");
  });

  it("--out puts the files where asked and notes runs of different experiments", async () => {
    const root = tempDir();
    const a = writeRun(root);
    const b = writeRun(root);
    const plan = JSON.parse(readFileSync(path.join(b, "plan.json"), "utf8"));
    writeFileSync(path.join(b, "plan.json"), JSON.stringify({ ...plan, experiment: "counting_v2" }));
    const cwd = tempDir("arl-report-cwd-");
    const run = await runArl(["report", a, b, "--out", "out/cmp"], { cwd });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("out/cmp/report.html\nout/cmp/report.md\n");
    const html = readFileSync(path.join(cwd, "out", "cmp", "report.html"), "utf8");
    expect(html).toContain("different experiments (counting, counting_v2)");
    expect(html).toContain("counting/g4");
    expect(html).toContain("counting_v2/g4");
  });
});

describe("arl report, partial runs and errors", () => {
  it("reports a partial run as partial, ignoring what an interrupted iteration left", async () => {
    const dir = writeRun(tempDir(), { planned: 10, iterations: 4 });
    // Iteration 5 appended its metrics and eval but was killed before committing its state;
    // iteration 6's metrics line was cut short.
    const lines = readJsonLines(path.join(dir, "metrics.jsonl"));
    appendFileSync(
      path.join(dir, "metrics.jsonl"),
      `${JSON.stringify({ ...lines[3], iteration: 5, success: 0.99 })}\n{"iteration":6,"success":0.`,
    );
    writeFileSync(
      path.join(dir, "eval", "iteration-00005.jsonl"),
      readFileSync(path.join(dir, "eval", "iteration-00004.jsonl")),
    );
    const cwd = tempDir("arl-report-cwd-");
    const run = await runArl(["report", dir, "--out", "r"], { cwd });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("arl report: note: g4 is a partial run (4 of 10 iterations)\n");
    const html = readFileSync(path.join(cwd, "r", "report.html"), "utf8");
    const md = readFileSync(path.join(cwd, "r", "report.md"), "utf8");
    expect(html).toContain('<span class="badge partial">partial: 4 of 10 iterations</span>');
    expect(html).toContain("partial run: 4 of 10 iterations committed");
    expect(html).toContain("1 metrics line(s) after the last committed iteration (4) are ignored");
    expect(html).toContain("the last line is incomplete");
    expect(html).toContain("eval results of uncommitted iteration(s) 5 are ignored");
    expect(html).not.toContain("0.990");
    expect(html).not.toMatch(/<td class="num">5<\/td>/);
    expect(md).toContain("| g4 | partial (4/10) | 3 | 4 |");
    expect(md).toContain("- status: partial (4 of 10 iterations)");
  });

  it("exits 2 with a clear message for a path that is not a run directory", async () => {
    const cwd = tempDir("arl-report-cwd-");
    mkdirSync(path.join(cwd, "runs", "counting"), { recursive: true });
    const notRun = await runArl(["report", "runs"], { cwd });
    expect(notRun.code).toBe(2);
    expect(notRun.stdout).toBe("");
    expect(notRun.stderr).toBe(
      "arl report: 'runs' is not a run directory (it has no plan.json) and has no run directory below it; give a run directory (OUT/<experiment>/<variant>/<hash>-<time>) or the folder that holds a sweep's runs\n",
    );

    const missing = await runArl(["report", "nowhere"], { cwd });
    expect(missing).toEqual({ code: 2, stdout: "", stderr: "arl report: 'nowhere' does not exist\n" });

    writeFileSync(path.join(cwd, "metrics.jsonl"), "{}\n");
    const file = await runArl(["report", "metrics.jsonl"], { cwd });
    expect(file.code).toBe(2);
    expect(file.stderr).toContain("'metrics.jsonl' is not a run directory");

    const none = await runArl(["report"], { cwd });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("give at least one run directory");
    expect(none.stderr).toContain("Usage: arl report RUN_DIR...");

    for (const r of [notRun, missing, file, none]) expect(r.stderr).not.toMatch(/\n\s+at |internal error/);
  });

  it("exits 1 with a clear message for a run with no metrics yet, writing nothing", async () => {
    const dir = writeRun(tempDir());
    rmSync(path.join(dir, "metrics.jsonl"));
    rmSync(path.join(dir, "state.json"));
    const cwd = tempDir("arl-report-cwd-");
    const run = await runArl(["report", dir], { cwd });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      `arl report: run '${dir}' has no metrics yet (no metrics.jsonl: no iteration has completed); nothing to report\n`,
    );
    expect(existsSync(path.join(dir, "report.html"))).toBe(false);

    writeFileSync(path.join(dir, "metrics.jsonl"), "");
    const empty = await runArl(["report", dir], { cwd });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toBe(
      `arl report: run '${dir}' has no metrics yet (no iteration has completed); nothing to report\n`,
    );

    // One good run and one without metrics: nothing is written.
    const good = writeRun(tempDir());
    const both = await runArl(["report", good, dir, "--out", "o"], { cwd });
    expect(both.code).toBe(1);
    expect(existsSync(path.join(cwd, "o"))).toBe(false);
  });

  it("exits 1 for a corrupt metrics line, and 2 for a plan that is not JSON", async () => {
    const dir = writeRun(tempDir());
    const lines = readFileSync(path.join(dir, "metrics.jsonl"), "utf8").split("\n");
    lines[1] = "{not json";
    writeFileSync(path.join(dir, "metrics.jsonl"), lines.join("\n"));
    const cwd = tempDir("arl-report-cwd-");
    const corrupt = await runArl(["report", dir], { cwd });
    expect(corrupt.code).toBe(1);
    expect(corrupt.stderr).toBe(
      `arl report: metrics.jsonl '${path.join(dir, "metrics.jsonl")}' line 2 is not valid JSON\n`,
    );

    const other = path.join(cwd, "broken");
    mkdirSync(other);
    writeFileSync(path.join(other, "plan.json"), "{");
    const plan = await runArl(["report", "broken"], { cwd });
    expect(plan.code).toBe(2);
    expect(plan.stderr).toContain("is not valid JSON");
  });
});
