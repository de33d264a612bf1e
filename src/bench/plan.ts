// Lowering benchmark: typed variants -> plans (defaults resolved, tools ordered, IR folded,
// data files located, RFC 8785 canonical JSON + sha256 per plan). The spec is compiled once,
// outside the timed runs; each timed run lowers every variant of the file. Rows report the
// median per variant. Cases: shipped experiments and a generated spec with many variants.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Compiler } from "../compiler.js";
import { hasErrors } from "../diagnostics/diagnostic.js";
import { canonicalize } from "../plan/canonical.js";
import { loweringContext, lowerModel } from "../plan/lower.js";
import type { SemanticModel } from "../semantics/analyze.js";
import {
  consume,
  defaultMeasureOptions,
  measure,
  median,
  type BenchResult,
  type BenchSection,
  type MeasureOptions,
} from "./harness.js";
import { at } from "../contracts/checked.js";

/** The repository's experiments/ (src/bench and dist/bench are both two levels down). */
const experimentsDir = fileURLToPath(new URL("../../experiments/", import.meta.url));
const examples = ["quickstart.arl", "findmax-ablations.arl", "pg-table3-max-steps.arl", "agentrl-table6-ablation.arl"];

/** A spec whose sweep (3 axes) and ablation (4 arms) give `arms * 8 * 8 * 4` variants. */
function generatedSpec(): { text: string; variants: number } {
  const turns = [4, 6, 8, 10, 12, 14, 16, 20];
  const lrs = ["1e-7", "2e-7", "5e-7", "1e-6", "2e-6", "5e-6", "1e-5", "2e-5"];
  const groups = [2, 4, 8, 16];
  const arms = ["full", "no_task_norm", "loo", "dr_grpo"];
  const text = `import "std/algorithms" as algo
import "std/envs/findmax" as findmax
import "std/envs/rooms" as rooms

experiment many {
  seed: 11
  policy { model: "builtin:tiny", sampling { temperature: 0.9, top_p: 0.95, max_new_tokens: 128 } }
  env code extends findmax.task { split { train: 0.7, valid: 0.1, test: 0.2 } }
  env quest extends rooms.world { quest_length: 5, weight: 0.5 }
  harness { format: function_call, max_turns: 12, on_budget: truncate, observation { max_tokens: 512, overflow: keep_head_tail } }
  reward {
    success: outcome.success
    progress: potential(0.2 * quest.progress)
    slow: -0.01 * episode.turns when episode.turns > 8
  }
  constraints { no_finish_early: block(tool.name == "finish" and episode.turns < 2) }
  algorithm extends algo.grpo { group_size: 8, reduction: token_mean, advantage { task_norm: true } }
  rollout { tasks_per_batch: 16, iterations: 50, async { max_policy_lag: 2 } }
  eval { k: [1, 4, 8], every: 5 }
  sweep {
    harness.max_turns: [${turns.join(", ")}]
    algorithm.optimizer.lr: [${lrs.join(", ")}]
    algorithm.group_size: [${groups.join(", ")}]
  }
  ablation {
    full {}
    no_task_norm { algorithm.advantage.task_norm: false }
    loo { algorithm.advantage.baseline: leave_one_out, algorithm.advantage.normalize: none }
    dr_grpo { algorithm.reduction: constant(1024), algorithm.advantage.normalize: none }
  }
}
`;
  return { text, variants: arms.length * turns.length * lrs.length * groups.length };
}

interface Case {
  readonly name: string;
  readonly model: SemanticModel;
  readonly variants: number;
}

function compile(file: string): SemanticModel {
  const result = new Compiler().check(file, { plan: false });
  if (!result.model || hasErrors(result.diagnostics)) {
    const first = result.diagnostics.find((d) => d.severity === "error");
    throw new Error(
      `${path.basename(file)} does not compile${first ? `: ${first.code} ${first.message} at ${first.range.start.line}:${first.range.start.column}` : ""}`,
    );
  }
  return result.model;
}

export function planSection(options: MeasureOptions = defaultMeasureOptions): BenchSection {
  const generated = generatedSpec();
  return {
    name: "lowering: variants -> hashed plans",
    describe() {
      return [
        `cases: shipped experiments (${examples.join(", ")}) and a generated spec with ${generated.variants} variants (sweep 8 x 8 x 4, ablation of 4 arms, 2 envs, 10 tools).`,
        `${options.warmup} warm-up + ${options.runs} measured runs per case; each run lowers every variant of the file (compiled once, outside the timed runs).`,
        "Timed: lowerModel = defaults resolved, tools ordered, IR folded, data files located, canonical JSON + sha256 per plan. Rows show the median per variant.",
      ];
    },
    async run() {
      const dir = mkdtempSync(path.join(tmpdir(), "arl-bench-plan-"));
      try {
        const generatedFile = path.join(dir, "many.arl");
        writeFileSync(generatedFile, generated.text);
        const cases: Case[] = [];
        for (const name of examples) {
          const model = compile(path.join(experimentsDir, name));
          cases.push({ name, model, variants: model.experiments.reduce((n, e) => n + e.variants.length, 0) });
        }
        const many = compile(generatedFile);
        cases.push({ name: `generated (${generated.variants} variants)`, model: many, variants: generated.variants });

        const results: BenchResult[] = [];
        for (const c of cases) {
          const context = loweringContext(c.model.program);
          const check = lowerModel(c.model, context);
          if (check.plans.length !== c.variants)
            throw new Error(`${c.name}: ${check.plans.length} plans for ${c.variants} variants`);
          const samples = (await measure(() => lowerModel(c.model, context), options)).map((ms) => ms / c.variants);
          const bytes = check.plans.reduce((n, p) => n + canonicalize(p.plan).length, 0) / c.variants;
          results.push({
            name: `${c.name}: lower, per variant`,
            medianMs: median(samples),
            minMs: Math.min(...samples),
            maxMs: Math.max(...samples),
            runs: samples.length,
            note: `${c.variants} variant${c.variants === 1 ? "" : "s"}, ~${(bytes / 1024).toFixed(1)} KiB canonical plan`,
          });
        }
        // Where the time of one plan goes: the canonical form and hash alone.
        const one = at(lowerModel(many).plans, 0).plan;
        const hashOnly = await measure(() => canonicalize(one), options);
        results.push({
          name: "  canonical JSON of one plan (generated)",
          medianMs: median(hashOnly),
          minMs: Math.min(...hashOnly),
          maxMs: Math.max(...hashOnly),
          runs: hashOnly.length,
        });
        consume(results);
        return results;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
