// The multi-turn peer benchmark's own logic: ARL's side is the stated work (K lookups then an
// answer, scored by the shared file), the cold start's records teach exactly that conversation,
// the gate refuses timing below 90% of episodes with exactly K calls then an answer, and, on the
// real stack (torch, the real Qwen3 tokenizer and template), ARL's cold start on those records
// teaches the random tiny Qwen3 to do so in at least 90% of the episodes of ARL's harness and of
// the plain loop that TRL's side shares its env file with.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  GATE_SHARE,
  LOOKUP_TOOL,
  TOOL_COLD_START,
  TOOL_WORK,
  TRL_LOOKUP_TOOL,
  arlEpisodes,
  gateRows,
  lookupRows,
  sftRecords,
  toolColdStart,
  toolPeerRows,
  toolPeerSpec,
  turnGate,
  type ToolEpisode,
  type ToolSteps,
} from "../../src/bench/peer-tools.js";
import { arlSteps } from "../../src/bench/peer.js";
import { Compiler } from "../../src/compiler.js";
import { toolDefinitions } from "../../src/episode/tool-descriptions.js";
import { toolsFor } from "../../src/episode/harness.js";
import { lowerModel } from "../../src/plan/lower.js";
import { pythonWithTorch } from "../../src/trainer/launch.js";
import { skipTitle } from "../helpers/skip-reporter.js";

const RUNTIME = path.join(import.meta.dirname, "../../runtime-gpu");
const dir = mkdtempSync(path.join(tmpdir(), "arl-peer-tools-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const K = TOOL_WORK.calls;
const ok = (n: number): ToolEpisode[] => Array.from({ length: n }, () => ({ calls: K, answered: true }));
const off = (n: number, e: ToolEpisode): ToolEpisode[] => Array.from({ length: n }, () => e);

function writeInputs(at: string): void {
  const rows = lookupRows(TOOL_COLD_START.records);
  writeFileSync(path.join(at, "lookups.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  writeFileSync(path.join(at, "sft.jsonl"), sftRecords(rows));
  copyFileSync(path.join(RUNTIME, "bench/tool_peer_env.py"), path.join(at, "tool_peer_env.py"));
}

describe("multi-turn peer benchmark", () => {
  it("gives ARL K lookups then an answer, scored by the shared env file, with the cold start on the generated records", () => {
    writeInputs(dir);
    for (const coldStart of [undefined, TOOL_COLD_START]) {
      const file = path.join(dir, coldStart ? "cold.arl" : "tools.arl");
      writeFileSync(file, toolPeerSpec(path.join(dir, "qwen3"), 5, TOOL_WORK, coldStart));
      const result = new Compiler().check(file);
      expect(result.diagnostics).toEqual([]);
      const plan = lowerModel(result.model!).plans[0]!.plan;
      expect(plan.harness.max_turns).toBe(K + 1);
      expect(plan.harness.max_response_tokens).toBe(TOOL_WORK.turnTokens);
      expect(plan.harness.format).toBe("function_call");
      expect(plan.algorithm.group_size).toBe(TOOL_WORK.group);
      expect(plan.rollout.tasks_per_batch).toBe(TOOL_WORK.prompts);
      // The cold start fits the distribution at temperature 1; RL samples below it.
      expect(plan.policy.sampling).toMatchObject({
        temperature: coldStart ? 1 : TOOL_WORK.temperature,
        top_p: 1,
        top_k: 0,
      });
      expect(plan.harness.context.history).toBe("exact");
      // The tool as the template is shown it: the records' and the floor's definition.
      expect(toolDefinitions(toolsFor(plan, "lookups"))).toEqual([LOOKUP_TOOL]);
      const env = plan.envs.lookups as { scorer: string; verifier: { path: string } | null; lookup_column: string };
      expect(env).toMatchObject({ scorer: "verl", lookup_column: "facts" });
      expect(env.verifier?.path).toBe("tool_peer_env.py");
      if (coldStart) {
        expect(plan.rollout.sft).toMatchObject({ epochs: coldStart.epochs, batch: coldStart.batch, lr: coldStart.lr });
        expect(plan.rollout.iterations).toBe(5);
        // RL's one step leaves the cold-started weights as they are.
        expect(plan.algorithm.optimizer.lr).toBeLessThanOrEqual(1e-12);
      } else {
        expect(plan.rollout.sft).toBeNull();
        expect(plan.algorithm.optimizer.lr).toBe(TOOL_WORK.lr);
      }
    }
  });

  it("generates rows of K keys whose answer is their sum, and records of K calls with their results then the sum", () => {
    const rows = lookupRows(8);
    expect(rows.map((r) => r.split)).toEqual(["train", "train", "train", "train", "train", "train", "test", "test"]);
    for (const r of rows) {
      expect(Object.keys(r.facts)).toHaveLength(K);
      expect(r.answer).toBe(Object.values(r.facts).reduce((s, v) => s + Number(v), 0));
      for (const key of Object.keys(r.facts)) expect(r.prompt).toContain(key);
    }
    const records = sftRecords(rows)
      .trim()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as {
            messages: { role: string; content: string; tool_calls?: { function: { arguments: { key: string } } }[] }[];
            tools: unknown[];
          },
      );
    expect(records).toHaveLength(6);
    for (const [i, rec] of records.entries()) {
      const row = rows[i]!;
      // ARL's rendering of the tool and TRL's, in turn: each side's prompt is one the model was taught on.
      expect(rec.tools).toEqual([i % 2 === 0 ? LOOKUP_TOOL : TRL_LOOKUP_TOOL]);
      expect(rec.messages.map((m) => m.role)).toEqual([
        "user",
        ...Array(K).fill(["assistant", "tool"]).flat(),
        "assistant",
      ]);
      const calls = rec.messages.filter((m) => m.tool_calls).map((m) => m.tool_calls![0]!.function.arguments.key);
      expect(calls).toEqual(Object.keys(row.facts));
      expect(rec.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(Object.values(row.facts));
      expect(rec.messages.at(-1)!.content).toBe(String(row.answer));
    }
  });

  it("gates timing on exactly K calls then an answer in at least 90% of each side's episodes", () => {
    expect(GATE_SHARE).toBe(0.9);
    // 18 of 20 is 90%: passes; 17 of 20 fails.
    const pass = turnGate({ ARL: [ok(10), ok(8).concat(off(2, { calls: K - 1, answered: true }))], TRL: [ok(20)] }, K);
    expect(pass.passed).toBe(true);
    expect(pass.sides.map((s) => [s.side, s.exact, s.episodes])).toEqual([
      ["ARL", 18, 20],
      ["TRL", 20, 20],
    ]);
    // One call too many, K calls without an answer (turns ran out), a malformed call: none count.
    const misses = [
      off(1, { calls: K + 1, answered: true }),
      off(1, { calls: K, answered: false }),
      off(1, { calls: -1, answered: false }),
    ].flat();
    const fail = turnGate({ ARL: [ok(20)], TRL: [ok(17), misses] }, K);
    expect(fail.passed).toBe(false);
    expect(fail.sides[1]).toMatchObject({ side: "TRL", exact: 17, episodes: 20, passed: false });
    const rows = gateRows(fail, K);
    expect(rows.map((r) => r.met)).toEqual([true, false]);
    expect(rows[1]!.note).toBe("17 of 20: below 0.9, timing refused (the sides would not run the same turns)");
    // A side that ran no episode does not pass.
    expect(turnGate({ floor: [] }, K).passed).toBe(false);
  });

  it("refuses a timing ratio when a side's timed runs fell below the gate, and otherwise takes the per-round medians", () => {
    const run = (seconds: number[], episodes: ToolEpisode[][]): ToolSteps => ({
      seconds,
      cpuSeconds: seconds,
      varied: seconds.map(() => 1),
      gradNorm: seconds.map(() => 0.5),
      episodes,
    });
    const arl = [run([9, 2, 2], [ok(16), ok(16)])];
    const trl = [run([9, 4, 4], [ok(16), ok(16)])].map((s) => ({ ...s, label: "1.16.0" }));
    const floor = [run([9, 1, 1], [ok(10), off(6, { calls: 0, answered: true })])];
    const rows = toolPeerRows({ arl, trl, floor }, K);
    expect(rows.map((r) => r.name)).toEqual([
      "ARL: arl run, PyTorch trainer, dataset lookup tool",
      "TRL 1.16.0 GRPOTrainer, environment_factory",
      "compute floor: plain PyTorch loop",
      "ARL / TRL, multi-turn",
      "ARL / TRL, multi-turn, CPU time",
      "ARL / floor, multi-turn",
    ]);
    expect(rows[0]!.note).toContain("32 of 32 episodes K calls then an answer; rewards varied in 100% of the groups");
    expect(rows[3]).toMatchObject({ value: 0.5, goal: "<= 0.5", met: true });
    expect(rows[5]!.value).toBeUndefined();
    expect(rows[5]!.note).toBe(
      `refused: floor, multi-turn's runs were not the same work: round 1: 10 of 16 episodes made exactly ${K} calls then answered`,
    );
    // A step with one group in four alike (a taught model answering a prompt the same way G times)
    // is still timed; one with more than half alike is not.
    const floorAlike = (varied: number) => [{ ...run([9, 2, 2], [ok(16), ok(16)]), varied: [1, varied, 1] }];
    const quarter = toolPeerRows({ arl, trl, floor: floorAlike(0.75) }, K);
    expect(quarter[5]).toMatchObject({ name: "ARL / floor, multi-turn", value: 1 });
    expect(quarter[2]!.note).toContain("rewards varied in 92% of the groups");
    const most = toolPeerRows({ arl, trl, floor: floorAlike(0.25) }, K);
    expect(most[5]!.value).toBeUndefined();
    expect(most[5]!.note).toBe(
      "refused: floor, multi-turn's runs were not the same work: in step 2 of round 1 the rewards of 75% of the groups were all equal (advantages 0); at most 50% may be",
    );
  });
});

const python = pythonWithTorch();
const hasStack =
  spawnSync(python, ["-c", "import torch, transformers"], { stdio: "ignore", timeout: 120_000 }).status === 0;

describe.skipIf(!hasStack)(
  skipTitle(
    "multi-turn peer benchmark on the real stack",
    !hasStack,
    "needs torch and transformers in .venv: npm run setup:python",
  ),
  () => {
    it("the floor shows the tool as ARL does, and TRL as the records' other rendering says", () => {
      const shown = spawnSync(
        python,
        [
          "-c",
          "import json, tool_peer_env as e; from transformers.utils import get_json_schema; " +
            "print(json.dumps([e.TOOL_DEFINITION, get_json_schema(e.LookupEnv().lookup)]))",
        ],
        { cwd: path.join(RUNTIME, "bench"), encoding: "utf8" },
      );
      expect(shown.status, shown.stderr).toBe(0);
      expect(JSON.parse(shown.stdout)).toEqual([LOOKUP_TOOL, TRL_LOOKUP_TOOL]);
    });

    it("ARL's cold start teaches the random Qwen3 K well-formed calls then an answer in >= 90% of episodes, in ARL's harness and the plain loop", async () => {
      const at = mkdtempSync(path.join(dir, "real-"));
      const model = await toolColdStart(at, python);
      // ARL: 2 iterations of the bench's own spec from the cold-started checkpoint.
      let arl: ToolEpisode[][] = [];
      await arlSteps(at, toolPeerSpec(model, 2), 0, "gate.arl", (runDir) => {
        arl = arlEpisodes(runDir);
      });
      // The plain loop: tool_side_by_side.py's floor, parsing the Qwen3 calls itself.
      const out = path.join(at, "floor.json");
      const floor = spawnSync(
        python,
        [
          path.join(RUNTIME, "bench/tool_side_by_side.py"),
          "floor",
          "--model",
          model,
          "--data",
          path.join(at, "lookups.jsonl"),
          "--out",
          out,
          "--calls",
          String(K),
          "--steps",
          "2",
          "--turn-tokens",
          String(TOOL_WORK.turnTokens),
          "--temperature",
          String(TOOL_WORK.temperature),
        ],
        { encoding: "utf8", env: { ...process.env, PYTHONPATH: RUNTIME } },
      );
      expect(floor.status, floor.stderr.slice(-2000)).toBe(0);
      const plain = (JSON.parse(readFileSync(out, "utf8")) as { episodes: ToolEpisode[][] }).episodes;
      const gate = turnGate({ ARL: arl, floor: plain }, K);
      expect(gate.sides.map((s) => s.episodes)).toEqual([32, 32]);
      for (const s of gate.sides) expect(s.share, `${s.side}: ${s.exact} of ${s.episodes}`).toBeGreaterThanOrEqual(0.9);
    }, 3_600_000);
  },
);
