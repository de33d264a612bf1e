// The front-end benchmark's spec, as a small model of blocks and fields: the shared defaults and
// one task family (tools, env, experiment) per unit, drawn from a seeded generator. Printed both
// as ARL and as YAML by frontend-print.ts.

import { at } from "../contracts/checked.js";

export type Value =
  | { readonly t: "num"; readonly raw: string }
  | { readonly t: "str"; readonly v: string; readonly triple?: boolean }
  | { readonly t: "bool"; readonly v: boolean }
  | { readonly t: "none" }
  /** An ARL expression (reference, call, arithmetic); YAML users write these as strings. */
  | { readonly t: "expr"; readonly src: string }
  | { readonly t: "list"; readonly items: readonly Value[] }
  | { readonly t: "rec"; readonly entries: readonly Entry[] };

interface FieldEntry {
  readonly t: "field";
  readonly path: readonly string[];
  readonly value: Value;
  readonly doc?: string;
  readonly comment?: string;
}

export interface BlockEntry {
  readonly t: "block";
  readonly type: string;
  readonly name?: string;
  readonly ext?: string;
  readonly entries: readonly Entry[];
  readonly doc?: string;
  /** Printed on one line: `type { a: 1, b: 2 }`. */
  readonly inline?: boolean;
  /** Dotted paths stay dotted keys in YAML (Hydra override syntax), as in sweeps and ablations. */
  readonly overrides?: boolean;
}

export type Entry = FieldEntry | BlockEntry;

const num = (raw: string | number): Value => ({ t: "num", raw: String(raw) });
const str = (v: string): Value => ({ t: "str", v });
const text = (v: string): Value => ({ t: "str", v, triple: true });
const bool = (v: boolean): Value => ({ t: "bool", v });
const ex = (src: string): Value => ({ t: "expr", src });
const list = (...items: Value[]): Value => ({ t: "list", items });
const rec = (...entries: Entry[]): Value => ({ t: "rec", entries });
const field = (p: string, value: Value, extra: { doc?: string; comment?: string } = {}): FieldEntry => ({
  t: "field",
  path: p.split("."),
  value,
  ...extra,
});
const block = (type: string, entries: Entry[], extra: Omit<BlockEntry, "t" | "type" | "entries"> = {}): BlockEntry => ({
  t: "block",
  type,
  entries,
  ...extra,
});

export function common(): Entry[] {
  return [
    block(
      "env",
      [
        field("kind", str("subprocess")),
        field("timeout_s", num(30)),
        block("split", [field("train", num("0.8")), field("valid", num("0.1")), field("test", num("0.1"))], {
          inline: true,
        }),
      ],
      { name: "base_env", doc: "Defaults shared by every task family." },
    ),
    block(
      "experiment",
      [
        field("seed", num(0)),
        block("policy", [
          field("model", str("builtin:tiny")),
          block("sampling", [field("temperature", num("1.0"))], { inline: true }),
        ]),
        block("resources", [field("backend", ex("local"))], { inline: true }),
      ],
      { name: "base_experiment", doc: "Defaults shared by every experiment." },
    ),
  ];
}

const estimators = ["grpo", "rloo", "ppo", "reinforce", "dr_grpo"];
const models = [
  "hf:Qwen/Qwen2.5-1.5B-Instruct",
  "hf:Qwen/Qwen2.5-7B-Instruct",
  "builtin:tiny",
  "hf:meta-llama/Llama-3.1-8B-Instruct",
];

/** One task family: two tools, an environment and an experiment (about 110 ARL lines). */
export function unit(i: number, next: () => number): Entry[] {
  const pick = <T>(xs: readonly T[]): T => at(xs, Math.floor(next() * xs.length));
  const tests = `run_tests_${i}`;
  const reader = `read_file_${i}`;
  const family = `family_${i}`;
  const temperature = (0.5 + Math.floor(next() * 6) / 10).toFixed(1);
  const group = pick([4, 8, 16]);
  const turns = 6 + (i % 10);
  const out: Entry[] = [
    block(
      "tool",
      [
        field(
          "description",
          text(
            `Run the unit tests of the current solution for family ${i}\nand report which ones fail, with the first assertion message.\nCall it after every edit; it never changes the files.`,
          ),
        ),
        block("parameters", [
          block(
            "path",
            [
              field("type", str("string")),
              field("description", str(`File to test, relative to the task root (family ${i}).`)),
            ],
            { inline: true },
          ),
          block(
            "timeout_s",
            [
              field("type", str("integer")),
              field("minimum", num(1)),
              field("maximum", num(600)),
              field("default", num(30 + (i % 5) * 10)),
            ],
            { inline: true },
          ),
          block("verbose", [field("type", str("boolean")), field("default", bool(false))], { inline: true }),
          block("filter", [
            field("type", str("array")),
            field("items", rec(field("type", str("string")))),
            field("description", str('Only tests whose name contains one of these, e.g. "edge\\case".')),
          ]),
        ]),
        field("returns", str("text")),
      ],
      {
        name: tests,
        doc: `Runs the test-suite of task family ${i}.\nThe output is truncated by the harness, not by the tool.`,
      },
    ),
    block(
      "tool",
      [
        field(
          "description",
          str(`Read one file of the workspace of family ${i}.\nReturns "<missing>" when there is no such file.`),
        ),
        block("parameters", [
          block("path", [field("type", str("string"))], { inline: true }),
          block(
            "max_bytes",
            [field("type", str("integer")), field("minimum", num(1)), field("default", num("65_536"))],
            { inline: true },
          ),
        ]),
        field("returns", str("text")),
      ],
      { name: reader },
    ),
    block(
      "env",
      [
        field("kind", str("subprocess")),
        field("command", list(str("python"), str("-m"), str(`envs.${family}`), str("--seed"), str(String(i)))),
        field("timeout_s", num(60 + (i % 4) * 30), { comment: "slow machines need more" }),
        block("split", [field("train", num("0.8")), field("valid", num("0.1")), field("test", num("0.1"))], {
          inline: true,
          doc: "Disjoint by task id.",
        }),
        block("signals", [
          field("tests_passed", str("bool")),
          field("progress", str("float")),
          field("tool_calls", str("int")),
          field('"pass@1"', str("float")),
        ]),
        block(
          "params",
          [field("difficulty", num(i % 3)), field("language", str("python")), field("strict", bool(i % 2 === 0))],
          { inline: true },
        ),
        field("optimal_length", num(3 + (i % 9))),
        field("tools", list(ex(tests), ex(reader))),
      ],
      { name: family, ext: "common.base_env", doc: `Task family ${i}: repair a function until its tests pass.` },
    ),
  ];

  const experiment: Entry[] = [
    field(
      "description",
      str(`${pick(estimators).toUpperCase()} on family ${i}: outcome reward, shaped progress, tool output masked`),
    ),
    field("seed", num(i)),
    block("policy", [
      field("model", str(pick(models))),
      block(
        "sampling",
        [field("temperature", num(temperature)), field("top_p", num("0.95")), field("max_new_tokens", num("1_024"))],
        { inline: true },
      ),
    ]),
    block("env", [field("split.test", num("0.2")), field("weight", num("1.0"))], { name: "main", ext: family }),
    ...(i > 0
      ? [block("env", [field("weight", num("0.5"))], { name: "aux", ext: `family_${i - 1}`, inline: true })]
      : []),
    block("harness", [
      field("tools", list(ex(tests), ex(reader))),
      field("format", ex(pick(["function_call", "text_action"]))),
      field("max_turns", num(turns)),
      field("max_response_tokens", num(2048)),
      field("on_budget", ex(pick(["truncate", "terminate"]))),
      block("observation", [field("max_tokens", num(256)), field("overflow", ex("keep_head"))], { inline: true }),
      field(
        "system_prompt",
        text(
          `You are repairing a function in task family ${i}.\nRead the code first, then run the tests.\nChange as little as you can; explain nothing.\nStop when every test passes.`,
        ),
      ),
    ]),
    block(
      "reward",
      [
        field("success", ex("1.0 * outcome.tests_passed"), { doc: "1 when every test passes, 0 otherwise." }),
        field("progress", ex(`potential(0.${1 + (i % 9)} * state.progress)`), {
          doc: "Potential-based: keeps the ranking of policies.",
        }),
        field("abnormal", ex("-0.2 when episode.aborted and not outcome.tests_passed")),
        field("cost", ex("-0.02 * episode.tool_calls")),
        field("length", ex("-(episode.tokens - 1_024) / 4096 when episode.tokens > 1_024")),
        field("bonus", ex("0.1 * (state.progress >= 0.5 or outcome.partial)"), { comment: "small on purpose" }),
      ],
      { doc: "Outcome first; shaping terms are potential-based." },
    ),
    block("constraints", [
      field("no_writes", ex('block(tool.name == "execute")')),
      field("max_calls", ex("block(episode.tool_calls > 64)")),
    ]),
    block("mask", [field("loss", ex("generated")), field("keep_sampling", bool(true))], { inline: true }),
    block("algorithm", [
      field("estimator", ex(pick(estimators))),
      field("group_size", num(group)),
      block(
        "advantage",
        [
          field("baseline", ex("leave_one_out")),
          field("normalize", bool(true)),
          field("task_norm", bool(false)),
          field("gamma", num("1.0")),
          field("lambda", num("0.95")),
        ],
        { inline: true },
      ),
      block("clip", [field("low", num("0.2")), field("high", num("0.28")), field("dual", num("3.0"))], {
        inline: true,
      }),
      block(
        "kl",
        [
          field("coef", num("1e-3")),
          field("estimator", ex("k3")),
          field("placement", ex("loss")),
          field("reference", ex("initial")),
        ],
        { inline: true },
      ),
      block("optimizer", [
        field("lr", num("5e-7")),
        field("weight_decay", num("0.0")),
        field("betas", list(num("0.9"), num("0.999"))),
        field("schedule", ex("cosine(warmup: 10, min_ratio: 0.1)")),
      ]),
      block("critic", [block("optimizer", [field("lr", num("5e-6"))], { inline: true })]),
      field("reduction", ex("constant(1024)")),
      field("epochs", num(1)),
      field("minibatches", num(4)),
    ]),
    field("algorithm.kl.coef", num("0.001"), { comment: "override after the block" }),
    block("rollout", [
      field("tasks_per_batch", num(16)),
      field("iterations", num(40 + (i % 5) * 10)),
      field("concurrency", num(32)),
      block("async", [field("max_policy_lag", num(1))], { inline: true }),
    ]),
    block(
      "eval",
      [
        field("split", ex("test")),
        field("every", num(10)),
        field("episodes", num(64)),
        field("k", list(num(1), num(4), num(8))),
        field("seeds", list(num(1), num(2), num(3))),
      ],
      { inline: true },
    ),
    block("resources", [field("backend", ex("torch")), field("gpus", num(8)), field("launcher", str("torchrun"))], {
      inline: true,
    }),
    block("allow", [field("self-inclusive-baseline", str("matching the original GRPO objective"))]),
    block(
      "sweep",
      [
        field("harness.max_turns", list(num(turns), num(turns * 2))),
        field("algorithm.group_size", list(num(4), num(8))),
      ],
      { overrides: true },
    ),
    block("ablation", [
      block("full", [], { overrides: true, inline: true }),
      block("no_task_norm", [field("algorithm.advantage.task_norm", bool(true))], { overrides: true, inline: true }),
      block("no_shaping", [field("reward.progress", num(0)), field("reward.bonus", num(0))], { overrides: true }),
    ]),
  ];
  out.push(
    block("experiment", experiment, {
      name: `exp_${i}`,
      ext: "common.base_experiment",
      doc: `Experiment ${i}: the family's standard recipe.`,
    }),
  );
  if (i % 10 === 9) {
    out.push(
      block(
        "experiment",
        [field("algorithm.advantage.baseline", ex("mean")), field("policy.sampling.temperature", num("1.0"))],
        { name: `exp_${i}_mean`, ext: `exp_${i}`, doc: "Mean baseline instead of leave-one-out." },
      ),
    );
  }
  return out;
}
