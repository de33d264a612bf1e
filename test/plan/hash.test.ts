// The plan hash follows meaning only: the same experiment written differently hashes the same,
// and any change of what a run would do changes it. Each case writes specs into temp folders.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { hashesOf, lower, workspace } from "./support.js";

const envs = `// Two local envs.
env shop {
  kind: http
  url: "http://localhost:8080/shop"
  signals {
    success { scope: outcome, type: bool }
    cart { scope: state, type: count }
  }
  tool search {
    description: "Search the shop."
    parameters {
      query { type: string, description: "Keywords." }
      page { type: integer, required: false, minimum: 1 }
    }
  }
  tool buy { description: "Buy what is in the cart." }
}

env code {
  kind: findmax
  signals { success { scope: outcome, type: bool } }
}
`;

const spec = `// The reference spelling.
import "std/algorithms" as algo
import "./envs" as local

experiment exp {
  seed: 3
  policy {
    model: "builtin:tiny"
    sampling { temperature: 0.7, top_p: 0.9 }
  }
  env shop extends local.shop { tasks: 50 }
  env code extends local.code {}
  harness { max_turns: 12, format: function_call }
  reward {
    success: 1.0 * outcome.success
    late: -0.1 when episode.turns > 4
  }
  algorithm extends algo.grpo {
    group_size: 4
    reduction: token_mean
  }
  rollout { tasks_per_batch: 8 }
  eval { k: [1, 4] }
  sweep { harness.max_turns: [6, 8] }
  ablation {
    base {}
    loo { algorithm.advantage.baseline: leave_one_out, algorithm.advantage.normalize: none }
  }
}
`;

/** The same experiment: blocks and fields reordered, other aliases, comments, commas, layout, number spellings, dotted paths. */
const respelled = `import "./envs" as e /* the envs */
import "std/algorithms" as a


experiment exp {
  ablation {
    loo {
      algorithm.advantage.normalize: none,
      algorithm.advantage.baseline: leave_one_out,
    }
    base {}
  }
  sweep { harness.max_turns: [6, 8,] }
  eval.k: [1, 4,]
  rollout.tasks_per_batch: 8,
  algorithm extends a.grpo { reduction: token_mean, group_size: 4.0 }
  reward {
    late: (-0.1) when (episode.turns > 4)   // a penalty
    success: 1 * outcome.success
  }
  harness { format: function_call, max_turns: 1_2 }
  env code extends e.code {}
  env shop extends e.shop { tasks: 5e1 }
  policy.sampling.top_p: 0.90
  policy { model: "builtin:tiny", sampling { temperature: 7e-1 } }
  seed: 3
}
`;

const envsRespelled = `env code { kind: findmax, signals { success { type: bool, scope: outcome } } }
/// The shop.
env shop {
  tool buy { description: "Buy what is in the cart." }
  tool search {
    parameters {
      page { minimum: 1, required: false, type: integer }
      query { description: "Keywords.", type: string }
    }
    description: "Search the shop."
  }
  signals {
    cart { type: count, scope: state }
    success { scope: outcome, type: bool }
  }
  url: "http://localhost:8080/shop"
  kind: http
}
`;

const reference = () => hashesOf({ "spec.arl": spec, "envs.arl": envs });

describe("the plan hash", () => {
  it("is the same whatever the field order, comments, formatting, commas or import aliases", () => {
    const a = reference();
    expect(Object.keys(a).sort()).toEqual([
      "exp/base,max_turns=6",
      "exp/base,max_turns=8",
      "exp/loo,max_turns=6",
      "exp/loo,max_turns=8",
    ]);
    expect(new Set(Object.values(a)).size).toBe(4);
    expect(hashesOf({ "spec.arl": respelled, "envs.arl": envsRespelled })).toEqual(a);
  });

  it("is independent of the provenance, which does change with comments", () => {
    const one = lower(path.join(workspace({ "spec.arl": spec, "envs.arl": envs }), "spec.arl"))[0]!.plan;
    const two = lower(
      path.join(workspace({ "spec.arl": `${spec}\n// another comment\n`, "envs.arl": envs }), "spec.arl"),
    )[0]!.plan;
    expect(two.hash).toBe(one.hash);
    expect(two.provenance.sources).not.toEqual(one.provenance.sources);
    const { provenance: _a, ...restOne } = one;
    const { provenance: _b, ...restTwo } = two;
    expect(JSON.stringify(restTwo, null, 2)).toBe(JSON.stringify(restOne, null, 2)); // the same bytes, not only the same hash
  });

  it("gives the same plan bytes for a respelled spec", () => {
    const strip = (files: Record<string, string>) =>
      lower(path.join(workspace(files), "spec.arl"))
        .map(({ plan: { provenance: _p, ...rest } }) => JSON.stringify(rest, null, 2))
        .sort();
    expect(strip({ "spec.arl": respelled, "envs.arl": envsRespelled })).toEqual(
      strip({ "spec.arl": spec, "envs.arl": envs }),
    );
  });

  it("does not change when a base value that every variant overrides changes", () => {
    const a = reference();
    expect(hashesOf({ "spec.arl": spec.replace("max_turns: 12", "max_turns: 30"), "envs.arl": envs })).toEqual(a);
    // ... but the same edit changes a variant that does not override it.
    const noSweep = spec.replace("  sweep { harness.max_turns: [6, 8] }\n", "");
    expect(hashesOf({ "spec.arl": noSweep.replace("max_turns: 12", "max_turns: 30"), "envs.arl": envs })).not.toEqual(
      hashesOf({ "spec.arl": noSweep, "envs.arl": envs }),
    );
  });

  it("changes with every change of meaning, and only for the variants it touches", () => {
    const a = reference();
    const edits: [string, string, string][] = [
      ["seed", "seed: 3", "seed: 4"],
      ["sampling", "temperature: 0.7", "temperature: 0.8"],
      ["env parameter", "tasks: 50", "tasks: 51"],
      ["reward coefficient", "-0.1 when", "-0.2 when"],
      ["reward condition", "episode.turns > 4", "episode.turns >= 4"],
      ["new reward term", "    late:", "    bonus: 0.5 when outcome.success\n    late:"],
      ["group size", "group_size: 4", "group_size: 5"],
      ["reduction", "reduction: token_mean", "reduction: constant(512)"],
      ["eval k", "k: [1, 4]", "k: [1, 8]"],
      ["tool list", "format: function_call", "format: function_call, tools: [shop.search, shop.buy]"],
      ["env weight", "env code extends local.code {}", "env code extends local.code { weight: 2 }"],
      ["kl", "reduction: token_mean", "reduction: token_mean\n    kl.coef: 0.01"],
    ];
    const seen = new Set(Object.values(a));
    for (const [what, from, to] of edits) {
      expect(spec.includes(from), what).toBe(true);
      const b = hashesOf({ "spec.arl": spec.replace(from, to), "envs.arl": envs });
      for (const variant of Object.keys(a)) {
        expect(b[variant], `${what}: ${variant}`).not.toBe(a[variant]);
        expect(seen.has(b[variant]!), `${what}: ${variant} collides`).toBe(false);
        seen.add(b[variant]!);
      }
    }
    const envEdits: [string, string, string][] = [
      ["tool description", "Search the shop.", "Search the whole shop."],
      ["parameter becomes required", "required: false, ", ""],
      ["signal range", "cart { scope: state, type: count }", "cart { scope: state, type: count, max: 10 }"],
    ];
    for (const [what, from, to] of envEdits) {
      const b = hashesOf({ "spec.arl": spec, "envs.arl": envs.replace(from, to) });
      for (const variant of Object.keys(a)) expect(b[variant], `${what}: ${variant}`).not.toBe(a[variant]);
    }
    // An ablation arm's own change touches that arm only.
    const b = hashesOf({
      "spec.arl": spec.replace("algorithm.advantage.normalize: none", "algorithm.advantage.normalize: std"),
      "envs.arl": envs,
    });
    expect(b["exp/base,max_turns=6"]).toBe(a["exp/base,max_turns=6"]);
    expect(b["exp/loo,max_turns=6"]).not.toBe(a["exp/loo,max_turns=6"]);
  });

  it("changes with the content of a data file, not with its modification time", () => {
    const sql = `import "std/envs/sql" as sql
experiment e {
  policy { model: "builtin:tiny" }
  env bank extends sql.bank_demo { database: "./bank.sqlite" }
}
`;
    const one = hashesOf({ "spec.arl": sql, "bank.sqlite": "rows: 1" });
    expect(hashesOf({ "spec.arl": sql, "bank.sqlite": "rows: 1" })).toEqual(one);
    expect(hashesOf({ "spec.arl": sql, "bank.sqlite": "rows: 2" })).not.toEqual(one);
  });
});
