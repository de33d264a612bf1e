// The host library kinds at check time (docs/env-host.md, "Env library sessions", "Checking"): a
// knob of the wrong type is a diagnostic at the knob with a hint, before any Python; a rows file is
// hashed in the plan and bounds `tasks`; the libraries' own Python-free checks are diagnostics too.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { lower, validatePlan, workspace } from "./support.js";

const ROWS =
  [
    '{"prompt": "1+1?", "reward_spec": {"ground_truth": "2"}}',
    '{"prompt": "2+2?", "reward_spec": {"ground_truth": "4"}}',
    '{"prompt": "3+3?", "reward_spec": {"ground_truth": "6"}}',
  ].join("\n") + "\n";

function spec(imports: string, env: string, extra = ""): string {
  return `import "std/algorithms" as algo
${imports}
experiment e {
  policy { model: "builtin:tiny" }
  ${env}
  harness { max_turns: 1 }
  reward { r: outcome.${extra || "score"} }
  algorithm extends algo.grpo { group_size: 2, advantage { baseline: leave_one_out } }
  eval { success: outcome.${extra || "score"} > 0 }
}
`;
}

function errors(files: Record<string, string>): { code: string; line: number; message: string; hint?: string }[] {
  const dir = workspace(files);
  const result = new Compiler().check(path.join(dir, "spec.arl"));
  return result.diagnostics
    .filter((d) => d.severity === "error")
    .map((d) => ({ code: d.code, line: d.range.start.line, message: d.message, ...(d.hint ? { hint: d.hint } : {}) }));
}

describe("host library knobs at check time", () => {
  it("a knob of the wrong type is a diagnostic at that knob, for each library", () => {
    const cases: [string, string, string, RegExp][] = [
      [
        'import "std/envs/reasoning_gym" as rg',
        'env t extends rg.task {\n    dataset: "chain_sum"\n    size: "ten"\n  }',
        "score",
        /size/,
      ],
      ['import "std/envs/textworld_express" as twx', "env t extends twx.coin {\n    game: chess\n  }", "won", /game/],
      ['import "std/envs/textarena" as ta', "env t extends ta.game {\n    env_id: 12\n  }", "reward", /env_id/],
      [
        'import "std/envs/gymnasium" as gym',
        'env t extends gym.text_env {\n    id: "Guess-v0"\n    max_episode_steps: 0\n  }',
        "reward",
        /max_episode_steps/,
      ],
      [
        'import "std/envs/skyrl_gym" as sky',
        'env t extends sky.single_step {\n    env_id: search\n    rows: "./rows.jsonl"\n  }',
        "reward",
        /env_id/,
      ],
    ];
    for (const [imports, env, signal, knob] of cases) {
      const found = errors({ "spec.arl": spec(imports, env, signal), "rows.jsonl": ROWS });
      expect(found, env).toHaveLength(1);
      expect(found[0]!.message, env).toMatch(knob);
      // The line of the wrong knob: the env block starts on line 5.
      expect(found[0]!.line, env).toBe(5 + env.split("\n").findIndex((l) => knob.test(l)));
    }
  });

  it("skyrl-gym's rows file is hashed in the plan and its line count is tasks; a larger tasks is refused", () => {
    const env =
      'env t extends sky.single_step {\n    env_id: gsm8k\n    rows: "./rows.jsonl"\n    split { train: 0.5, test: 0.5 }\n  }';
    const dir = workspace({
      "spec.arl": spec('import "std/envs/skyrl_gym" as sky', env, "reward"),
      "rows.jsonl": ROWS,
    });
    const [plan] = lower(path.join(dir, "spec.arl"));
    const planned = plan!.plan.envs.t as unknown as { tasks: number; rows: { path: string; sha256: string } };
    expect(planned.rows).toEqual({ path: "rows.jsonl", sha256: createHash("sha256").update(ROWS).digest("hex") });
    expect(planned.tasks).toBe(3);
    expect(validatePlan(plan!.plan)).toEqual([]);
    const tooMany = errors({
      "spec.arl": spec('import "std/envs/skyrl_gym" as sky', env.replace("gsm8k", "gsm8k\n    tasks: 5"), "reward"),
      "rows.jsonl": ROWS,
    });
    expect(tooMany.map((e) => e.message)).toEqual([expect.stringMatching(/tasks is 5, but its file has 3 tasks/)]);
  });

  it("skyrl-gym's rows file is confined to the experiment's folder: a path above it or an absolute one is refused unread", () => {
    const dir = workspace({ "spec.arl": "", "rows.jsonl": ROWS });
    const outside = path.join(path.dirname(dir), `rows-outside-${path.basename(dir)}.jsonl`);
    writeFileSync(outside, ROWS);
    for (const written of [`../${path.basename(outside)}`, outside]) {
      const env = `env t extends sky.single_step {\n    env_id: gsm8k\n    rows: "${written}"\n  }`;
      const text = spec('import "std/envs/skyrl_gym" as sky', env, "reward");
      writeFileSync(path.join(dir, "spec.arl"), text);
      const found = new Compiler().check(path.join(dir, "spec.arl")).diagnostics.filter((d) => d.severity === "error");
      // At the rows knob's line (1-based, as the compiler's ranges count lines).
      expect(
        found.map((d) => [d.code, d.range.start.line]),
        written,
      ).toEqual([["data-file-outside-root", text.split("\n").findIndex((l) => l.includes("rows:")) + 1]]);
      expect(found[0]!.message).toContain("'env.t.rows'");
    }
  });

  it("the libraries' own checks: text2sql without its databases, gymnasium with both id and entry_point", () => {
    const sql = errors({
      "spec.arl": spec(
        'import "std/envs/skyrl_gym" as sky',
        'env t extends sky.multi_turn {\n    env_id: text2sql\n    rows: "./rows.jsonl"\n  }',
        "reward",
      ),
      "rows.jsonl": ROWS,
    });
    expect(sql).toEqual([
      expect.objectContaining({
        code: "env-knob-invalid",
        message: expect.stringMatching(/db_path: text2sql reads its databases from a folder/),
      }),
    ]);
    const gym = errors({
      "spec.arl": spec(
        'import "std/envs/gymnasium" as gym',
        'env t extends gym.text_env {\n    id: "Guess-v0"\n    entry_point: "guess:GuessEnv"\n  }',
        "reward",
      ),
    });
    expect(gym).toEqual([
      expect.objectContaining({
        code: "env-knob-invalid",
        message: expect.stringMatching(/write exactly one of id and entry_point/),
      }),
    ]);
  });

  it("an unknown reasoning-gym dataset or config field, or an unknown TextArena env id, is refused at that knob with the close names (the pinned libraries' names, no Python)", () => {
    const rg = (body: string) =>
      errors({ "spec.arl": spec('import "std/envs/reasoning_gym" as rg', `env t extends rg.task {\n${body}\n  }`) });
    expect(rg('    dataset: "chain_sun"')).toEqual([
      {
        code: "env-knob-invalid",
        line: 6,
        message: expect.stringMatching(/dataset: reasoning-gym 0\.1\.25 has no dataset 'chain_sun'/),
        hint: "did you mean 'chain_sum'?",
      },
    ]);
    const field = rg('    dataset: "chain_sum"\n    config {\n      min_terms: 2\n      max_termz: 3\n    }');
    expect(field).toEqual([
      {
        code: "env-knob-invalid",
        line: 9,
        message: expect.stringMatching(/config\.max_termz: 'max_termz' is not a field of chain_sum's config/),
        hint: "did you mean 'max_terms'?",
      },
    ]);
    expect(rg('    dataset: "chain_sum"\n    config {\n      min_terms: 2\n    }')).toEqual([]);
    const ta = errors({
      "spec.arl": spec(
        'import "std/envs/textarena" as ta',
        'env t extends ta.game {\n    env_id: "Sudoku-v9"\n  }',
        "reward",
      ),
    });
    expect(ta).toEqual([
      {
        code: "env-knob-invalid",
        line: 6,
        message: expect.stringMatching(/TextArena 0\.7\.4 has no env 'Sudoku-v9'/),
        hint: expect.stringMatching(/Sudoku-v0/),
      },
    ]);
    expect(
      errors({
        "spec.arl": spec(
          'import "std/envs/textarena" as ta',
          'env t extends ta.game {\n    env_id: "Sudoku-v0"\n  }',
          "reward",
        ),
      }),
    ).toEqual([]);
  });
});
