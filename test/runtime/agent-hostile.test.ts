// `arl run` of an agent experiment on builtin:tiny whose programs each send hostile requests
// between ordinary ones: a tool schema nested 3,000 deep (chat completions, Responses,
// Messages), Responses metadata nested 100,000 deep, or a 2 MB prompt. Each hostile request gets
// a 400, the program's next call is served on the same session, every episode finishes, and
// the run completes.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { embeddedTrainerFlag } from "../helpers/plans.js";

const KINDS = ["chat-tools", "responses-tools", "messages-tools", "responses-metadata", "huge-prompt"];

const PROGRAM = `
const KINDS = ${JSON.stringify(KINDS)};
const fs = require("node:fs");
const { task, task_id } = JSON.parse(fs.readFileSync(0, "utf8"));
const key = process.env.OPENAI_API_KEY;
const post = async (url, body) => {
  const started = Date.now();
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer " + key, "x-api-key": key }, body });
  await r.text();
  return { status: r.status, ms: Date.now() - started };
};
const chat = (extra = "") => post(process.env.OPENAI_BASE_URL + "/chat/completions", '{"messages":[{"role":"user","content":"hello"}],"max_tokens":3' + extra + "}");
const schema = (d) => '{"type":"object","properties":{"a":'.repeat(d) + '{"type":"string"}' + "}}".repeat(d);
const nest = (d) => "[".repeat(d) + "1" + "]".repeat(d);
const attack = (kind) => {
  if (kind === "chat-tools") return chat(',"tools":[{"type":"function","function":{"name":"f","parameters":' + schema(3000) + "}}]");
  if (kind === "responses-tools") return post(process.env.OPENAI_BASE_URL + "/responses", '{"input":"hello","tools":[{"type":"function","name":"f","parameters":' + schema(3000) + "}]}");
  if (kind === "messages-tools") return post(process.env.ANTHROPIC_BASE_URL + "/v1/messages", '{"model":"m","max_tokens":3,"messages":[{"role":"user","content":"hello"}],"tools":[{"name":"f","input_schema":' + schema(3000) + "}]}");
  if (kind === "responses-metadata") return post(process.env.OPENAI_BASE_URL + "/responses", '{"input":"hello","metadata":{"k":' + nest(100000) + "}}");
  return post(process.env.OPENAI_BASE_URL + "/chat/completions", JSON.stringify({ messages: [{ role: "user", content: "x".repeat(2 * 1024 * 1024) }] }));
};
(async () => {
  const statuses = [(await chat()).status];
  const hostile = {};
  for (const kind of KINDS) {
    hostile[kind] = await attack(kind);
    statuses.push((await chat()).status);
  }
  fs.appendFileSync("results.jsonl", JSON.stringify({ task: task_id, statuses, hostile }) + "\\n");
  console.log(JSON.stringify({ signals: { ok: statuses.every((s) => s === 200) && Object.values(hostile).every((h) => h.status === 400) } }));
})();
`;

const spec = `import "std/algorithms" as algo
import "std/envs/agent" as agent
experiment hostile {
  seed: 4
  policy { model: "builtin:tiny?hidden=24&embed=16&heads=2&key=8", sampling { max_new_tokens: 4 } }
  env helper extends agent.program {
    command: ["${process.execPath}", "hostile.cjs"]
    // The program records what each request was answered in the spec's folder, which a sandbox keeps read-only;
    // what the sandbox holds is test/runtime/agent-sandbox.test.ts's.
    sandbox { mode: off }
    task_file: "./tasks.jsonl"
    split { train: 0.5, test: 0.5 }
    signals { ok { scope: outcome, type: bool } }
  }
  harness { max_turns: 12, max_response_tokens: 8 }
  reward { ok: outcome.ok }
  algorithm extends algo.rloo { group_size: 2 }
  rollout { tasks_per_batch: 5, iterations: 1, concurrency: 10 }
  eval { split: test, success: outcome.ok, every: 1, before_training: false, tasks: 1, k: [1] }
  resources { backend: local }
}
`;

describe("arl run with hostile agent requests", () => {
  it("answers each hostile request with a 4xx, serves the episode on, and completes the run", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-agent-hostile-"));
    writeFileSync(path.join(dir, "hostile.cjs"), PROGRAM);
    writeFileSync(
      path.join(dir, "tasks.jsonl"),
      Array.from({ length: 10 }, (_, i) => `${JSON.stringify({ n: i })}\n`).join(""),
    );
    writeFileSync(path.join(dir, "spec.arl"), spec);
    const run = await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const results = readFileSync(path.join(dir, "results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map(
        (line) => JSON.parse(line) as { statuses: number[]; hostile: Record<string, { status: number; ms: number }> },
      );
    // Ten training episodes and one evaluation episode.
    expect(results.length).toBe(11);
    for (const r of results) {
      expect(r.statuses).toEqual(Array.from({ length: KINDS.length + 1 }, () => 200));
      expect(Object.keys(r.hostile)).toEqual(KINDS);
      for (const kind of KINDS) expect(r.hostile[kind]!.status, kind).toBe(400);
    }
    const runs = path.join(dir, "runs", "hostile", "default");
    const metrics = JSON.parse(
      readFileSync(path.join(runs, readdirSync(runs)[0]!, "metrics.jsonl"), "utf8").trim(),
    ) as Record<string, unknown>;
    expect(metrics.agent_errors).toBe(0);
    expect(metrics.end_reasons).toMatchObject({ env_error: 0 });
  }, 180_000);
});
