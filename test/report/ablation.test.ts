// `arl report` on real run directories: a two-variant ablation run by `arl run` (scripted
// trainer double, subprocess env), which ends with the report of both variants side by side in
// the folder of their runs; `arl report SPEC` finds the same runs again.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { runAblation } from "./fixtures.js";

describe("arl report on runs of an ablation", () => {
  it("reports the variants' learning curves, evals and paired per-task differences", async () => {
    const { cwd, dirs, stdout } = await runAblation(2);
    const [g4, g2] = dirs;
    expect(dirs).toHaveLength(2);
    // Each run's own report, then the sweep's, in runs/<experiment>.
    const runs = path.join(cwd, "runs");
    expect(stdout).toContain(`report: ${path.join(g4!, "report.html")}\n`);
    expect(stdout).toContain(`report: ${path.join(g2!, "report.html")}\n`);
    expect(stdout).toMatch(new RegExp(`\nsweep report \\(2 runs\\): ${path.join(runs, "counting", "report.html")}\n$`));
    const html = readFileSync(path.join(runs, "counting", "report.html"), "utf8");
    const md = readFileSync(path.join(runs, "counting", "report.md"), "utf8");

    // Header from plan.json and manifest.json.
    for (const dir of [g4!, g2!]) {
      const plan = JSON.parse(readFileSync(path.join(dir, "plan.json"), "utf8"));
      expect(html).toContain(plan.hash);
      expect(md).toContain(plan.hash);
    }
    expect(html).toContain("<dt>trainer</dt><dd>scripted-double 0</dd>");
    expect(html).toContain(`node ${process.version}`);

    // Learning curves of both runs, as SVG.
    for (const id of [
      "success",
      "reward",
      "effective-group-ratio",
      "generated-length",
      "entropy",
      "policy-loss",
      "grad-norm",
      "tokens-per-second",
      "iteration-time",
    ])
      expect(html, id).toMatch(new RegExp(`<figure class="chart" id="fig-${id}"><svg `));
    // One on-policy update per batch and no KL term: those two panels are 0 by construction, left out with why.
    for (const id of ["clip-fraction", "kl"]) expect(html, id).not.toContain(`id="fig-${id}"`);
    expect(html).toContain(
      "Clip fraction, 0 by construction: one update per batch, on-policy, so the probability ratio is 1 and nothing is clipped",
    );
    expect(html).toContain("KL, 0 by construction: kl.coef is 0");

    // The eval table has each run's recorded numbers (iteration 2), and iteration 0 recomputed.
    for (const dir of [g4!, g2!]) {
      const metrics = readFileSync(path.join(dir, "metrics.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const ev = metrics[1].eval as Record<string, number>;
      for (const k of [1, 2])
        expect(html).toContain(
          `${ev[`pass@${k}`]!.toFixed(3)} [${ev[`pass@${k}_low`]!.toFixed(3)}, ${ev[`pass@${k}_high`]!.toFixed(3)}]`,
        );
    }
    expect((html.match(/0 \(before training\)/g) ?? []).length).toBe(2);

    // Paired differences over the 6 eval tasks both variants evaluated at iteration 2.
    for (const k of [1, 2]) {
      expect(html).toMatch(
        new RegExp(
          `<td>g2</td><td class="num">${k}</td><td class="num">6</td><td class="num">2 / 2</td><td class="num">[-+]?\\d\\.\\d{3} \\[`,
        ),
      );
      expect(md).toMatch(new RegExp(`\\| g2 \\| ${k} \\| 6 \\| 2 / 2 \\| [-+]?\\d\\.\\d{3} \\[`));
    }
    expect(html).not.toMatch(/https?:\/\//);

    // The same runs found from the spec (under --runs, default runs): the report goes there again.
    const fromSpec = await runArl(["report", "spec.arl", "--out", "again"], { cwd });
    expect(fromSpec.stderr).toBe("");
    expect(fromSpec.code).toBe(0);
    const specPage = readFileSync(path.join(cwd, "again", "report.html"), "utf8");
    // The same comparison as the page arl run wrote.
    const comparison = (page: string) => /<section id="comparison">[\s\S]*?<\/section>/.exec(page)![0];
    expect(comparison(specPage)).toBe(comparison(html));
  }, 180_000);
});
