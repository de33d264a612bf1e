// `arl report` on a sweep: two ablation arms, each run with two seeds, found from the spec (or
// from the runs' directory), reported on one page: the variants with their seeds aggregated,
// paired per-task differences against a chosen baseline, the curves' data (mean and band over
// seeds, the new curves, SFT loss per epoch, the base eval at iteration 0, smoothing) and the
// watchdog's warnings.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ema } from "../../src/report/charts.js";
import { buildReport, reportInputs } from "../../src/report/index.js";
import { runArl } from "../helpers/cli.js";
import { tempDir, writeRun, writeSweep } from "./fixtures.js";

function readJsonLines(file: string): Record<string, unknown>[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Each task's pass@k at a run's last eval file. */
function lastEval(dir: string, k: number): Map<unknown, number> {
  return new Map(
    readJsonLines(path.join(dir, "eval", "iteration-00006.jsonl")).map((r) => [r.task, r[`pass@${k}`] as number]),
  );
}

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

describe("arl report on a sweep", () => {
  it("finds a spec's runs, aggregates each variant's seeds, compares against --baseline and charts every curve", async () => {
    const cwd = tempDir("arl-report-sweep-");
    const { runs, g4, g2 } = writeSweep(cwd);

    const run = await runArl(["report", "spec.arl", "--baseline", "g2", "--smooth", "0.5"], { cwd });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    // Written into the runs' directory (runs/<experiment>), not the working directory.
    expect(run.stdout).toBe("runs/counting/report.html\nruns/counting/report.md\n");
    expect(existsSync(path.join(cwd, "report.html"))).toBe(false);
    const html = readFileSync(path.join(runs, "counting", "report.html"), "utf8");
    const md = readFileSync(path.join(runs, "counting", "report.md"), "utf8");
    expect(html).toContain("<h1>counting: 2 variants, 4 runs</h1>");
    expect(html).toContain(
      "not run yet (no run directory of its plan under runs): counting/g4,seed=3, counting/g2,seed=3",
    );

    // The same model as the page, to check the numbers.
    const dirs = [...g4, ...g2].map((d) => path.relative(cwd, d));
    const { model } = await buildReport(dirs, { cwd, arlVersion: "0.1.0", baseline: "g2", smooth: 0.5 });
    expect(model.groups.map((g) => [g.label, g.members.map((m) => m.run.seed)])).toEqual([
      ["g4", [1, 2]],
      ["g2", [1, 2]],
    ]);
    expect(model.seedsAggregated).toBe(true);
    expect(model.comparison!.baseline.label).toBe("g2");

    // Final pass@k over seeds: mean ± sd [min, max] of the two seeds' recorded estimates.
    for (const [label, members] of [
      ["g4", g4],
      ["g2", g2],
    ] as const) {
      const finals = members.map(
        (d) =>
          (readJsonLines(path.join(d, "metrics.jsonl")).findLast((m) => m.eval)!.eval as Record<string, number>)[
            "pass@1"
          ]!,
      );
      const m = mean(finals);
      const sd = Math.abs(finals[0]! - finals[1]!) / Math.SQRT2;
      const cell = `${m.toFixed(3)} ± ${sd.toFixed(3)} [${Math.min(...finals).toFixed(3)}, ${Math.max(...finals).toFixed(3)}]`;
      expect(html).toMatch(
        new RegExp(
          `</span> ${label}( <span class="muted">\\(baseline\\)</span>)?</td><td class="num">1, 2</td><td class="num">${cell.replace(/[[\]]/g, "\\$&")}</td>`,
        ),
      );
      expect(md).toContain(cell);

      // The variant over its tasks, each task its mean over the seeds, with an interval around it:
      // what compares variants whose tasks are other games.
      const perSeed = members.map((d) => lastEval(d, 1));
      const overTasks = mean([...perSeed[0]!.keys()].map((t) => mean(perSeed.map((m) => m.get(t)!))));
      const [, low, high] = new RegExp(
        `\\| ${label}(?: \\(baseline\\))? \\|.*\\| ${overTasks.toFixed(3)} \\[(\\d\\.\\d{3}), (\\d\\.\\d{3})\\] \\|`,
      ).exec(md)!;
      expect(Number(low)).toBeLessThanOrEqual(overTasks);
      expect(Number(high)).toBeGreaterThanOrEqual(overTasks);
      expect(Number(high)).toBeGreaterThan(Number(low));
    }

    // Paired differences g4 - g2 over the 8 shared tasks, each task's score the mean over its seeds.
    for (const k of [1, 2]) {
      const a = g2.map((d) => lastEval(d, k));
      const b = g4.map((d) => lastEval(d, k));
      const tasks = [...a[0]!.keys()];
      const diffs = tasks.map((t) => mean(b.map((m) => m.get(t)!)) - mean(a.map((m) => m.get(t)!)));
      const row = model.comparison!.rows.find((r) => r.k === k)!;
      expect(row.label).toBe("g4");
      expect(row.tasks).toBe(8);
      expect(row.result!.differences).toHaveLength(8);
      row.result!.differences.forEach((d, i) => expect(d).toBeCloseTo(diffs[i]!, 12));
      expect(row.result!.meanDifference).toBeCloseTo(mean(diffs), 12);
      expect(row.result!.interval.low).toBeLessThanOrEqual(row.result!.meanDifference);
      expect(row.result!.interval.high).toBeGreaterThanOrEqual(row.result!.meanDifference);
      expect(html).toMatch(
        new RegExp(`<td>g4</td><td class="num">${k}</td><td class="num">8</td><td class="num">6 / 6</td>`),
      );
    }
    expect(html).toContain("Paired per-task differences against g2");

    // Curves: each variant's mean over its seeds with the min-max band, smoothed as asked.
    const chart = (id: string) => model.curves.find((c) => c.spec.id === id)!.spec;
    const metrics = (dir: string) => readJsonLines(path.join(dir, "metrics.jsonl"));
    const success = chart("success");
    expect(success.smooth).toBe(0.5);
    expect(success.intervals).toBe("band");
    const g4Success = success.series.find((s) => s.name === "g4")!.points;
    const perSeed = g4.map((d) => metrics(d).map((m) => m.success as number));
    expect(g4Success.map((p) => p.x)).toEqual([1, 2, 3, 4, 5, 6]);
    g4Success.forEach((p, i) => {
      expect(p.y).toBeCloseTo(mean(perSeed.map((s) => s[i]!)), 12);
      expect(p.low).toBe(Math.min(...perSeed.map((s) => s[i]!)));
      expect(p.high).toBe(Math.max(...perSeed.map((s) => s[i]!)));
    });
    // The new curves, from what metrics.jsonl records.
    const first = metrics(g4[0]!)[0]!;
    const time = first.time as Record<string, number>;
    const at1 = (id: string) => chart(id).series.find((s) => s.name === "g4")!.points[0]!.y;
    const bothSeeds = (f: (m: Record<string, unknown>) => number) => mean(g4.map((d) => f(metrics(d)[0]!)));
    expect(at1("policy-loss")).toBeCloseTo(
      bothSeeds((m) => m.policy_loss as number),
      12,
    );
    expect(at1("grad-norm")).toBeCloseTo(
      bothSeeds((m) => m.grad_norm as number),
      12,
    );
    expect(at1("tokens-per-second")).toBeCloseTo((first.tokens as number) / time.rollout_s!, 12);
    expect(at1("iteration-time")).toBeCloseTo(time.total_s!, 12);
    // The success term repeats the success chart: left out, and the page says why.
    expect(html).not.toContain('id="fig-reward-term-2"');
    expect(html).toContain("Reward term: success, the same as the success rate at every iteration");
    for (const id of [
      "success",
      "reward",
      "reward-term-1",
      "policy-loss",
      "grad-norm",
      "tokens-per-second",
      "iteration-time",
      "sft-loss",
    ])
      expect(html, id).toMatch(new RegExp(`<figure class="chart" id="fig-${id}"><svg `));
    // SFT loss per epoch (x: epoch), train and held-out lines of the variant that had a cold start.
    const sft = chart("sft-loss");
    expect(sft.xTitle).toBe("epoch");
    expect(sft.series.map((s) => [s.name, s.points.map((p) => [p.x, p.y])])).toEqual([
      ["g2 train", [1, 2, 3].map((e) => [e, 2.5 / e])],
      ["g2 held-out", [1, 2, 3].map((e) => [e, 2.7 / e + 0.1])],
    ]);
    expect(new Set(sft.series.map((s) => s.styleIndex))).toEqual(new Set([0, 1]));
    // The base eval at iteration 0 (not -1), before the cold-started row at 0.
    const evalPoints = model.evalCharts
      .find((c) => c.spec.id === "eval-pass-1")!
      .spec.series.find((s) => s.name === "g2")!.points;
    expect(evalPoints.slice(0, 2).map((p) => [p.x, p.base === true])).toEqual([
      [0, true],
      [0, false],
    ]);
    expect(evalPoints.every((p) => p.x >= 0)).toBe(true);

    // The watchdog's warning, in the page and the summary.
    const warnings = /<section id="warnings">[\s\S]*?<\/section>/.exec(html)![0];
    expect(warnings).toContain(
      '<td>g2,seed=1</td><td class="num">3</td><td><code>no-signal</code></td><td>no learning signal for 2 iterations in a row (iterations 2 and 3)</td>',
    );
    expect(md).toContain(
      "| g2,seed=1 | 3 | `no-signal` | no learning signal for 2 iterations in a row (iterations 2 and 3) |",
    );

    // The runs' directory gives the same runs (every one below it, in name order) and is where the report goes.
    const below = reportInputs(["runs/counting"], cwd);
    expect([...below.dirs].sort()).toEqual([...dirs].sort());
    expect(below.outDir).toBe(path.join(runs, "counting"));
    const fromDir = await runArl(["report", "runs/counting", "--baseline", "nope"], { cwd });
    expect(fromDir.code).toBe(2);
    expect(fromDir.stderr).toBe("arl report: --baseline 'nope' is none of the report's variants (g2, g4)\n");
  }, 60_000);

  it("smooths with the debiased exponential moving average", () => {
    expect(ema([1, 0, 0], 0.5)).toEqual([1, 1 / 3, 1 / 7]);
    expect(ema([2, 4], 0)).toEqual([2, 4]);
  });

  it("draws overlaid lines with their own dash, so that a reward term equal to the total stays visible", async () => {
    const dir = writeRun(tempDir());
    const lines = readJsonLines(path.join(dir, "metrics.jsonl")).map((m) =>
      JSON.stringify({
        ...m,
        reward: (m.reward_terms as Record<string, number>).success,
        reward_terms: { ...(m.reward_terms as object), progress: 0 },
      }),
    );
    writeFileSync(path.join(dir, "metrics.jsonl"), `${lines.join("\n")}\n`);
    const { html } = await buildReport([dir], { cwd: "/", arlVersion: "0.1.0" });
    const reward = /<figure class="chart" id="fig-reward">([\s\S]*?)<\/figure>/.exec(html)![1]!;
    const dashes = new Set([...reward.matchAll(/stroke-dasharray="([^"]+)"/g)].map((m) => m[1]));
    expect(dashes.size).toBeGreaterThanOrEqual(3);
  });
});
