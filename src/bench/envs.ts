// Environment benchmarks: how fast the built-in envs step under a scripted policy. One section
// function per env kind; register them in main.ts.
//
// rooms: the policy replays each task's optimal walkthrough (the solver's, computed outside the
// timed region). Two rows per world size: whole episodes (create = world generation and quest
// search, reset, every step, outcome, close), and steps alone (worlds generated beforehand, a
// fresh instance per episode, so the per-step solver search behind `progress` is still timed).
import { generateWorld } from "../envs/worlds/rooms/generate.js";
import { RoomsGame, roomsEnv, type RoomsEnv } from "../envs/worlds/rooms/index.js";
import { solve } from "../envs/worlds/rooms/solver.js";
import { findmaxEnv, findmaxTask, type FindmaxEnv } from "../envs/worlds/findmax/index.js";
import { sandboxLayers } from "../envs/worlds/findmax/sandbox.js";
import { sqlEnv, type SqlEnv } from "../envs/worlds/sql/index.js";
import type { ToolCall } from "../contracts/tool-calls.js";
import {
  defaultMeasureOptions,
  measure,
  median,
  type BenchResult,
  type BenchSection,
  type MeasureOptions,
} from "./harness.js";
import { at, defined } from "../contracts/checked.js";

const ROOMS_SIZES: readonly (readonly [rooms: number, objects: number, quest: number])[] = [
  [2, 3, 4],
  [4, 6, 8],
  [8, 12, 12],
];
const ROOMS_TASKS = 100;

function roomsPlanEnv(rooms: number, objects: number, quest_length: number): RoomsEnv {
  return {
    kind: "rooms",
    description: null,
    version: "1",
    tasks: ROOMS_TASKS,
    split: { train: 0.8, valid: 0, test: 0.2 },
    weight: 1,
    signals: {},
    optimal_steps: quest_length,
    budget_is_task_rule: false,
    reward_range: [0, 1],
    rooms,
    objects,
    quest_length,
  };
}

export function roomsSection(options: MeasureOptions = defaultMeasureOptions): BenchSection {
  return {
    name: "env rooms: steps/s with a scripted policy (walkthrough replay)",
    describe() {
      return [
        `${ROOMS_TASKS} tasks per size (${ROOMS_SIZES.map(([w, o, q]) => `w${w}-o${o}-q${q}`).join(", ")}); one run replays every task's optimal walkthrough once.`,
        "episodes: create (generation + quest search) + reset + steps + outcome + close; steps: worlds pre-generated, fresh instance per episode.",
      ];
    },
    async run() {
      const rows: BenchResult[] = [];
      for (const [w, o, q] of ROOMS_SIZES) {
        const env = roomsPlanEnv(w, o, q);
        const tasks = Array.from({ length: ROOMS_TASKS }, (_, t) => t);
        const worlds = tasks.map((t) =>
          generateWorld({ rooms: w, objects: o, quest_length: q, version: env.version }, t),
        );
        const scripts: (readonly ToolCall[])[] = worlds.map(
          (world) => defined(solve(world, world.start), "a walkthrough of a generated world").calls,
        );
        const steps = scripts.reduce((n, s) => n + s.length, 0);
        const label = `w${w}-o${o}-q${q}`;

        const episodes = await measure(async () => {
          let successes = 0;
          for (const t of tasks) {
            const game = await roomsEnv.create(env, t, 0);
            await game.reset();
            for (const call of at(scripts, t)) await game.step(call);
            if ((await game.outcome()).success === true) successes++;
            await game.close();
          }
          if (successes !== tasks.length)
            throw new Error(`rooms bench: ${tasks.length - successes} walkthroughs failed`);
          return successes;
        }, options);
        const stepOnly = await measure(() => {
          let progress = 0;
          for (const t of tasks) {
            const game = new RoomsGame(at(worlds, t));
            for (const call of at(scripts, t)) progress += game.stepSync(call).signals.progress as number;
          }
          return progress;
        }, options);
        for (const [kind, samples] of [
          ["episodes", episodes],
          ["steps", stepOnly],
        ] as const) {
          rows.push(throughputRow(`${label} ${kind}`, samples, steps, tasks.length));
        }
      }
      return rows;
    },
  };
}

/** A timing row with steps and episodes per second in its note. */
function throughputRow(name: string, samples: readonly number[], steps: number, episodes: number): BenchResult {
  const ms = median(samples);
  const rate = (n: number) => Math.round((n / ms) * 1000).toLocaleString("en-US");
  return {
    name,
    medianMs: ms,
    minMs: Math.min(...samples),
    maxMs: Math.max(...samples),
    runs: samples.length,
    note: `${rate(steps)} steps/s, ${rate(episodes)} episodes/s (${steps} steps)`,
  };
}

// sql: the bank_demo database, every task's walkthrough (describe the tables the gold SQL reads,
// then run it) replayed. Episodes: create (a connection; read-only, or a private in-memory copy
// when writable) + reset + steps + outcome + close. The demo data is generated before timing.
const SQL_TASKS = 300;

function sqlPlanEnv(read_only: boolean): SqlEnv {
  return {
    kind: "sql",
    description: null,
    version: "1",
    tasks: SQL_TASKS,
    split: { train: 0.8, valid: 0, test: 0.2 },
    weight: 1,
    signals: {},
    optimal_steps: 3,
    budget_is_task_rule: false,
    reward_range: [0, 1],
    database: null,
    questions: null,
    read_only,
    max_rows: 50,
  };
}

export function sqlSection(options: MeasureOptions = defaultMeasureOptions): BenchSection {
  return {
    name: "env sql: steps/s with a scripted policy (walkthrough replay)",
    describe() {
      return [
        `bank_demo, ${SQL_TASKS} tasks; one run replays every task's walkthrough (describe_table per table read, then the gold query) once.`,
        "episodes: create + reset + steps + outcome + close; read-only shares the data, writable opens a private in-memory copy per episode.",
      ];
    },
    async run() {
      const rows: BenchResult[] = [];
      for (const readOnly of [true, false]) {
        const env = sqlPlanEnv(readOnly);
        const tasks = Array.from({ length: SQL_TASKS }, (_, t) => t);
        const scripts: (readonly ToolCall[])[] = [];
        if (!sqlEnv.walkthrough) throw new Error("sql bench: the sql env has no walkthrough");
        for (const t of tasks)
          scripts.push(defined(await sqlEnv.walkthrough(env, t), `the sql walkthrough of task ${t}`));
        const steps = scripts.reduce((n, s) => n + s.length, 0);
        const samples = await measure(async () => {
          let successes = 0;
          for (const t of tasks) {
            const instance = await sqlEnv.create(env, t, 0);
            await instance.reset();
            for (const call of at(scripts, t)) await instance.step(call);
            if ((await instance.outcome()).success === true) successes++;
            await instance.close();
          }
          if (successes !== tasks.length) throw new Error(`sql bench: ${tasks.length - successes} walkthroughs failed`);
          return successes;
        }, options);
        rows.push(
          throughputRow(`bank_demo ${readOnly ? "read-only" : "writable"} episodes`, samples, steps, tasks.length),
        );
      }
      return rows;
    },
  };
}

// findmax: a scripted policy per task (read_code, run_tests, write_code with the fix, run_tests,
// finish; then the outcome, which runs the hidden tests). Every test run starts one sandboxed
// node process, so episodes cost about three process starts; they are timed sequentially and 8
// at a time (as the orchestrator runs a group). Fewer runs than the other sections: each is slow.
const FINDMAX_TASKS = 12;
const FINDMAX_CONCURRENCY = 8;

function findmaxPlanEnv(): FindmaxEnv {
  return {
    kind: "findmax",
    description: null,
    version: "1",
    tasks: 400,
    split: { train: 0.8, valid: 0, test: 0.2 },
    weight: 1,
    signals: {},
    optimal_steps: 3,
    budget_is_task_rule: false,
    reward_range: [0, 1],
    functions: ["find_max", "find_min", "sum", "index_of", "count_if", "reverse"],
    visible_tests: 3,
    hidden_tests: 8,
    time_limit_ms: 2000,
    memory_limit_mb: 128,
    require_namespaces: true,
  };
}

export function findmaxSection(options: MeasureOptions = defaultMeasureOptions): BenchSection {
  const runs: MeasureOptions = { warmup: 1, runs: Math.min(Math.max(options.runs, 3), 5) };
  return {
    name: "env findmax: steps/s with a scripted policy (sandboxed test runs)",
    describe() {
      return [
        `${FINDMAX_TASKS} tasks over all six functions; an episode is create + reset + read_code, run_tests, write_code (the fix), run_tests, finish (5 steps) + outcome (hidden tests) + close.`,
        `sequential: one episode at a time; concurrent: ${FINDMAX_CONCURRENCY} at a time. ${runs.runs} measured runs after ${runs.warmup} warm-up.`,
      ];
    },
    async run() {
      const env = findmaxPlanEnv();
      const tasks = Array.from({ length: FINDMAX_TASKS }, (_, t) => t);
      const scripts = tasks.map((t) => {
        const fixed = findmaxTask(env, t).fixed;
        return [
          { name: "read_code", arguments: {} },
          { name: "run_tests", arguments: {} },
          { name: "write_code", arguments: { code: fixed } },
          { name: "run_tests", arguments: {} },
          { name: "finish", arguments: {} },
        ] satisfies ToolCall[];
      });
      const steps = scripts.reduce((n, s) => n + s.length, 0);
      const episode = async (t: number): Promise<boolean> => {
        const instance = await findmaxEnv.create(env, t, 0);
        try {
          await instance.reset();
          for (const call of at(scripts, t)) await instance.step(call);
          return (await instance.outcome()).success === true;
        } finally {
          await instance.close();
        }
      };
      const check = (ok: readonly boolean[]) => {
        const failed = ok.filter((x) => !x).length;
        if (failed > 0) throw new Error(`findmax bench: ${failed} scripted episodes did not pass the hidden tests`);
        return ok.length;
      };
      const sequential = await measure(async () => {
        const ok: boolean[] = [];
        for (const t of tasks) ok.push(await episode(t));
        return check(ok);
      }, runs);
      const concurrent = await measure(async () => {
        const ok: boolean[] = [];
        for (let i = 0; i < tasks.length; i += FINDMAX_CONCURRENCY)
          ok.push(...(await Promise.all(tasks.slice(i, i + FINDMAX_CONCURRENCY).map(episode))));
        return check(ok);
      }, runs);
      const layers = await sandboxLayers();
      const rows: BenchResult[] = [];
      for (const [kind, samples] of [
        ["sequential", sequential],
        [`${FINDMAX_CONCURRENCY} concurrent`, concurrent],
      ] as const) {
        const ms = median(samples);
        rows.push({
          name: `episodes, ${kind}`,
          medianMs: ms,
          minMs: Math.min(...samples),
          maxMs: Math.max(...samples),
          runs: samples.length,
          note: `${((steps / ms) * 1000).toFixed(1)} steps/s, ${((tasks.length / ms) * 1000).toFixed(1)} episodes/s (${steps} steps, ${tasks.length * 3} sandbox runs)`,
        });
      }
      rows.push({
        name: "sandbox layers",
        value: [layers.permission !== null, layers.networkNamespace, layers.dataLimit].filter(Boolean).length,
        unit: " of 3",
        note: `permission model: ${layers.permission ?? "none"}; network namespace: ${layers.networkNamespace ? "yes" : "no"}; data rlimit: ${layers.dataLimit ? "yes" : "no"}`,
      });
      return rows;
    },
  };
}
