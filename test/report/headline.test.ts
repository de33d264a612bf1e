// The top of the report on the quick start's own run directory (test/fixtures/report/quickstart-run:
// the files `npx arl run experiments/quickstart.arl` wrote on seed 0, less the token buffer and
// checkpoints): the result before and after RL with RL's own gain and its interval, the settings,
// the iteration's own time, and the panels that are 0 by construction left out with why.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { deriveSeed } from "../../src/contracts/random.js";
import { buildReport } from "../../src/report/index.js";
import { pairedDifferences } from "../../src/rl/eval.js";

const run = fileURLToPath(new URL("../fixtures/report/quickstart-run", import.meta.url));

function perTask(iteration: number): Map<number, number> {
  const file = `${run}/eval/iteration-${String(iteration).padStart(5, "0")}.jsonl`;
  const rows = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { task: number; "pass@1": number });
  return new Map(rows.map((r) => [r.task, r["pass@1"]]));
}

const section = (html: string, id: string) =>
  new RegExp(`<(?:section|aside|div)[^>]* id="${id}"[\\s\\S]*?</(?:section|aside)>`).exec(html)?.[0] ?? "";

describe("the report's headline on the quick start's run", () => {
  it("leads with before, after and RL's own gain with its paired interval, as the README states them", async () => {
    const { model, html } = await buildReport([run], { cwd: "/", arlVersion: "0.1.0" });
    const gain = model.headline!.gains[0]!.gain;
    // Each of the 200 held-out tasks at iteration 25 against the same task at iteration 0.
    const before = perTask(0);
    const after = perTask(25);
    const tasks = [...before.keys()].sort((a, b) => a - b);
    expect(tasks).toHaveLength(200);
    const expected = pairedDifferences(
      tasks.map((t) => before.get(t)!),
      tasks.map((t) => after.get(t)!),
      { seed: deriveSeed(0, "report-rl-gain", 1), resamples: 10_000 },
    );
    expect(gain.tasks).toBe(200);
    expect(gain.iteration).toBe(25);
    expect(gain.before).toBeCloseTo(0.125, 12);
    expect(gain.after).toBeCloseTo(0.385, 12);
    expect(gain.result!.meanDifference).toBeCloseTo(0.26, 12);
    expect(gain.result!.interval).toEqual(expected.interval);
    expect(gain.result!.interval.low).toBeGreaterThan(0);

    const result = section(html, "result-card");
    expect(result).toMatch(
      /id="result-base"><div class="label">before the cold start<\/div><div class="value">0\.000<\/div>/,
    );
    expect(result).toMatch(
      /id="result-before"><div class="label">after the cold start<\/div><div class="value">0\.125<\/div><div class="ci">\[0\.080, 0\.175\]<\/div>/,
    );
    expect(result).toMatch(
      /id="result-after"><div class="label">after 25 RL iterations<\/div><div class="value">0\.385<\/div><div class="ci">\[0\.320, 0\.450\]<\/div>/,
    );
    const sign = (x: number) => `+${x.toFixed(3)}`;
    expect(result).toContain(
      `id="result-gain"><div class="label">RL's own gain</div><div class="value">+0.260</div><div class="ci">[${sign(expected.interval.low)}, ${sign(expected.interval.high)}]</div>`,
    );
    expect(result).toContain("paired over 200 tasks");
    expect(result).toContain('id="fig-headline"');
    // The result comes before every other section of the page.
    expect(html.indexOf("<section id=")).toBe(html.indexOf('<section id="result"'));
  });

  it("shows the plan's salient settings", async () => {
    const { html, markdown } = await buildReport([run], { cwd: "/", arlVersion: "0.1.0" });
    const settings = section(html, "settings");
    for (const [name, value] of [
      ["model", "builtin:tiny"],
      ["algorithm", "grpo"],
      ["group size", "8"],
      ["batch", "16 tasks × 8 = 128 episodes"],
      ["learning rate", "0.005 (adamw, 5 warm-up steps)"],
      ["KL", "off (coef 0)"],
      ["cold start", "400 walkthrough demos, 5 epochs, batch 40, lr 0.01"],
      ["max turns", "8"],
      ["seed", "0"],
    ])
      expect(settings).toContain(`<dt>${name}</dt><dd>${value}</dd>`);
    expect(markdown).toContain("- group size: 8");
    expect(markdown).toContain("| pass@1 | 0.000 | 0.125 | 0.385 | +0.260 [");
  });

  it("plots each iteration's own time, with the phases before training apart", async () => {
    const { model, html } = await buildReport([run], { cwd: "/", arlVersion: "0.1.0" });
    const first = JSON.parse(readFileSync(`${run}/metrics.jsonl`, "utf8").split("\n")[0]!) as {
      time: Record<string, number>;
    };
    const t = first.time;
    const chart = model.curves.find((c) => c.spec.id === "iteration-time")!.spec;
    const points = chart.series[0]!.points;
    expect(points).toHaveLength(25);
    expect(points[0]!.y).toBeCloseTo(t.total_s! - t.base_eval_s! - t.sft_s! - t.eval_before_s!, 9);
    // No longer the outlier: within twice the slowest of the other iterations.
    expect(points[0]!.y).toBeLessThan(2 * Math.max(...points.slice(1).map((p) => p.y)));
    expect(chart.subtitle).toBe(
      `iteration 1 without the ${(t.base_eval_s! + t.sft_s! + t.eval_before_s!).toFixed(1)} s before training (see Wall time)`,
    );
    expect(section(html, "time")).toContain("base eval 2.00 s, cold start (SFT) 15.2 s, eval before training 4.24 s");
  });

  it("leaves out the panels that are 0 by construction or repeat another, saying why", async () => {
    const { model, html } = await buildReport([run], { cwd: "/", arlVersion: "0.1.0" });
    const ids = model.curves.map((c) => c.spec.id);
    for (const id of ["kl", "clip-fraction", "reward"]) expect(ids).not.toContain(id);
    expect(model.omittedCurves.map((c) => c.title)).toEqual(["Reward per term", "Clip fraction", "KL"]);
    const note = /<p class="muted" id="curves-left-out">([\s\S]*?)<\/p>/.exec(html)![1]!;
    expect(note).toContain(
      "Reward per term, the same as the success rate at every iteration (the reward is its one term, success)",
    );
    expect(note).toContain("Clip fraction, 0 by construction: one update per batch, on-policy");
    expect(note).toContain("KL, 0 by construction: kl.coef is 0");
  });
});
