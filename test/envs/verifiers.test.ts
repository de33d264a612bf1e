// verifiers v1 tasksets as agent episodes (std/envs/verifiers, docs/envs.md "verifiers"): a small
// taskset written here (two @vf.reward, one weighted, and a @vf.metric) trained for two
// iterations of `arl run` on builtin:tiny, each episode's program streaming its reply through the
// run's gateway; every trained record's rewards equal what verifiers' own Task.score computes for
// the reply the gateway served (scored again here, in the env servers' Python). The taskset's
// faults (a reward that raises, a taskset that cannot be imported, a task it does not have) are
// env errors with one line each, never scored as the policy's; what the program cannot play
// faithfully (tool servers, a container, a runtime, judges, no prompt) and bad task lines are
// refused before any model call, the program run directly. Needs the env servers' venv
// (verifiers 0.4.0): skipped without it, failed under CI.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { readBuffer } from "../../src/episode/buffer.js";
import { ENV_SERVERS_NEED, envServersAvailable, envServersPython } from "../helpers/env-servers.js";

const arl = fileURLToPath(new URL("../../bin/arl.js", import.meta.url));

const TASKSET = `
import hashlib
import verifiers.v1 as vf

__all__ = ["EchoTaskset"]


class EchoTask(vf.Task):
    @vf.reward
    async def fingerprint(self, trace) -> float:
        # Any change of the reply's text changes it: the streamed reply must be the served one.
        return int(hashlib.sha256(trace.last_reply.encode()).hexdigest()[:8], 16) / 2**32

    @vf.reward(weight=2.0)
    async def brief(self, trace) -> float:
        return 1.0 if len(trace.last_reply) <= 12 else 0.0

    @vf.metric
    async def chars(self, trace) -> float:
        return float(len(trace.last_reply))


class EchoTaskset(vf.Taskset[EchoTask]):
    def load(self):
        for word in ["alpha", "beta", "gamma"]:
            yield EchoTask(vf.TaskData(prompt=f"Say {word}.", system_prompt="Answer in one word."))
        yield EchoTask(vf.TaskData(prompt=[vf.UserMessage(content="Say delta."), vf.AssistantMessage(content="Delta?"), vf.UserMessage(content="Yes.")]))
`;

const RAISING = `
import verifiers.v1 as vf

__all__ = ["RaisingTaskset"]


class RaisingTask(vf.Task):
    @vf.reward
    async def judged(self, trace) -> float:
        raise ValueError("scoring failed\\nthe reply has no number")


class RaisingTaskset(vf.Taskset[RaisingTask]):
    def load(self):
        yield RaisingTask(vf.TaskData(prompt="Give a number."))
`;

// Tasksets the program must refuse before any model call, each for one reason.
const REFUSED = `
import verifiers.v1 as vf

__all__ = ["Sized", "Runtimes", "Boxed", "Silent", "Tooled", "Judged"]


class Plain(vf.Task):
    @vf.reward
    async def said(self, trace) -> float:
        return 1.0


class Counted(vf.TasksetConfig):
    words: int = 2


class Sized(vf.Taskset[Plain, Counted]):
    def load(self):
        for i in range(self.config.words):
            yield Plain(vf.TaskData(prompt=f"Say {i}."))


class NeedsRuntime(vf.Task):
    @vf.reward
    async def ran(self, trace, runtime) -> float:
        return 1.0


class Runtimes(vf.Taskset[NeedsRuntime]):
    def load(self):
        yield NeedsRuntime(vf.TaskData(prompt="Run it."))


class Boxed(vf.Taskset[Plain]):
    def load(self):
        task = Plain(vf.TaskData(prompt="In a box."))
        task.NEEDS_CONTAINER = True
        yield task


class Silent(vf.Taskset[Plain]):
    def load(self):
        yield Plain(vf.TaskData())


class Tooled(vf.Taskset[Plain]):
    @classmethod
    def toolsets(cls, config):
        return [object()]

    def load(self):
        yield Plain(vf.TaskData(prompt="Search it."))


class Judged(vf.Taskset[Plain]):
    def load(self):
        yield Plain(vf.TaskData(prompt="Judge it."), vf.TaskConfig(judges=[{"id": "decision"}]))
`;

// The program's main() for each task line read from stdin (a JSON list), in one interpreter.
const DRIVE_MAIN = `
import contextlib, importlib.util, io, json, sys
spec = importlib.util.spec_from_file_location("verifiers_taskset", sys.argv[1])
program = importlib.util.module_from_spec(spec)
spec.loader.exec_module(program)
results = []
for line in json.load(sys.stdin):
    out, err, code = io.StringIO(), io.StringIO(), 0
    sys.stdin = io.StringIO(line)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            program.main()
        except SystemExit as exit:
            code = exit.code
    results.append({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
print(json.dumps(results))
`;

// verifiers' own scoring of a reply, independently of the program: the task's prompt and the
// reply as an assistant turn in a Trace (its message graph), then Task.score without a runtime.
const RESCORE = `
import asyncio, importlib.util, json, sys
import verifiers.v1 as vf
from verifiers.v1.graph import prepare_turn
from verifiers.v1.state import state_cls

spec = importlib.util.spec_from_file_location("echo_tasks", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
tasks = list(module.EchoTaskset(vf.TasksetConfig()))

async def score(index, reply):
    task = tasks[index]
    data = task.data
    prompt = [vf.SystemMessage(content=data.system_prompt)] if data.system_prompt else []
    prompt += [vf.UserMessage(content=data.prompt)] if isinstance(data.prompt, str) else list(data.prompt)
    trace = vf.Trace(task=vf.TraceTask(type=type(task).__name__, data=data), state=state_cls(type(task))(), agent=vf.AgentInfo(config=vf.AgentConfig()))
    answer = vf.AssistantMessage(content=reply or None)
    prepare_turn(trace, prompt).commit(vf.Response(id="r", created=0, model="m", message=answer, finish_reason="stop"))
    await task.score(trace)
    return {"reward": trace.reward, "rewards": {k: r.score for k, r in trace.rewards.items()}, "metrics": trace.metrics}

print(json.dumps([asyncio.run(score(q["index"], q["reply"])) for q in json.load(sys.stdin)]))
`;

interface SpecOptions {
  /** The task file's lines. */
  readonly lines: readonly object[];
  readonly iterations: number;
  /** The env's signals besides std/envs/verifiers's `reward`, and the reward terms. */
  readonly signals: string;
  readonly reward: string;
  /** Every task trained in the first batch (the faults), or half trained and half evaluated. */
  readonly allTrain?: boolean;
}

/** A spec of one env of std/envs/verifiers. */
function writeSpec(dir: string, { lines, iterations, signals, reward, allTrain = false }: SpecOptions): string {
  const split = allTrain ? "train: 1.0, test: 0" : "train: 0.5, test: 0.5";
  writeFileSync(path.join(dir, "tasks.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  writeFileSync(
    path.join(dir, "spec.arl"),
    `import "std/algorithms" as algo
import "std/envs/verifiers" as vf

experiment echo {
  seed: 0
  policy {
    model: "builtin:tiny"
    sampling { temperature: 1.0, max_new_tokens: 12 }
  }
  env echo extends vf.taskset {
    task_file: "./tasks.jsonl"
    split { ${split} }
    timeout_s: 120
    signals { ${signals} }
  }
  // Above max_new_tokens: a long reply is served cut (finish length) and scored, not ended by the budget.
  harness { max_turns: 2, max_response_tokens: 24, on_budget: truncate }
  reward { ${reward} }
  algorithm extends algo.grpo {
    group_size: 2
    reduction: token_mean
    optimizer { lr: 2e-3 }
    kl { coef: 0.0 }
  }
  rollout { tasks_per_batch: ${allTrain ? lines.length : lines.length / 2}, iterations: ${iterations}, concurrency: 4 }
  eval { split: ${allTrain ? "train" : "test"}, success: outcome.reward > 1, every: ${iterations}, before_training: false, tasks: 1, k: [1] }
  resources { backend: local }
  allow {
    self-inclusive-baseline: "a test of the taskset's rewards, not of the estimator"${allTrain ? '\n    eval-split-overlap: "every task is a fault played in the first batch"' : ""}
  }
}
`,
  );
  return path.join(dir, "spec.arl");
}

/** A program run to its end, `stdin` written: its exit code and what it wrote. */
function finished(
  file: string,
  args: readonly string[],
  options: { cwd?: string; env: NodeJS.ProcessEnv; stdin?: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, [...args], { cwd: options.cwd, env: options.env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}

async function arlRun(spec: string, out: string): Promise<{ status: number | null; output: string }> {
  const run = await finished(process.execPath, [arl, "run", spec, "--out", out], {
    env: { ...process.env, ARL_ENVSERVERS_PYTHON: envServersPython },
  });
  return { status: run.code, output: run.stdout + run.stderr };
}

const runDirOf = (output: string): string =>
  path.resolve(/run directory: (\S+)/.exec(output)?.[1] ?? "no run directory printed");

const available = envServersAvailable();

describe.skipIf(!available)(
  skipTitle("std/envs/verifiers: v1 tasksets as agent episodes", !available, ENV_SERVERS_NEED),
  () => {
    it("trains two iterations through the gateway, each record's rewards those of verifiers' own Task.score for the served reply", async () => {
      const dir = mkdtempSync(path.join(tmpdir(), "arl-verifiers-"));
      writeFileSync(path.join(dir, "echo_tasks.py"), TASKSET);
      // Line i plays the taskset's task 3 - i: the line's index, not its position, picks the task.
      const lines = [3, 2, 1, 0].map((index) => ({ taskset: "./echo_tasks.py", index }));
      const spec = writeSpec(dir, {
        lines,
        iterations: 2,
        signals:
          "fingerprint { scope: outcome, type: number }\n      brief { scope: outcome, type: number }\n      chars { scope: outcome, type: number }",
        reward:
          "total: outcome.reward\n    fingerprint: outcome.fingerprint\n    brief: outcome.brief\n    chars: 0.01 * outcome.chars",
      });
      const { status, output } = await arlRun(spec, path.join(dir, "out"));
      expect(status, output).toBe(0);
      const runDir = runDirOf(output);
      const metrics = readFileSync(path.join(runDir, "metrics.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { iteration: number; env_errors: number; gateway_calls: number });
      expect(metrics.map((m) => [m.iteration, m.env_errors, m.gateway_calls])).toEqual([
        [1, 0, 4],
        [2, 0, 4],
      ]);

      const records = readBuffer(path.join(runDir, "buffer.arlbuf")).records;
      expect(records).toHaveLength(8);
      const queries = records.map((r) => {
        const replies = (r.messages ?? []).filter((m) => m.role === "assistant");
        expect(replies, JSON.stringify(r.messages)).toHaveLength(1);
        return { index: 3 - r.task, reply: replies[0]?.content ?? "" };
      });
      const rescored = spawnSync(envServersPython, ["-c", RESCORE, path.join(dir, "echo_tasks.py")], {
        input: JSON.stringify(queries),
        encoding: "utf8",
      });
      expect(rescored.status, rescored.stderr).toBe(0);
      const scores = JSON.parse(rescored.stdout) as {
        reward: number;
        rewards: Record<string, number>;
        metrics: Record<string, number>;
      }[];
      records.forEach((r, i) => {
        const s = scores[i]!;
        expect(r.rewards, `record ${i}: ${JSON.stringify(queries[i])}`).toEqual({
          total: s.reward,
          fingerprint: s.rewards.fingerprint,
          brief: s.rewards.brief,
          chars: 0.01 * s.metrics.chars!,
        });
        expect(s.reward).toBeCloseTo(s.rewards.fingerprint! + 2 * s.rewards.brief!, 12);
      });
      // The fingerprint tells replies apart: the run did not score one text over and over.
      expect(new Set(records.map((r) => r.rewards.fingerprint)).size).toBeGreaterThan(1);
    }, 420_000);

    it("refuses, before any model call, what it cannot play faithfully or the task line gets wrong (exit 3, one line)", async () => {
      const dir = mkdtempSync(path.join(tmpdir(), "arl-verifiers-refused-"));
      writeFileSync(path.join(dir, "refused.py"), REFUSED);
      writeFileSync(path.join(dir, "broken.py"), 'raise RuntimeError("boom\\nthe taskset cannot start")\n');
      const cases: [object, string][] = [
        [
          { taskset: "./refused.py", index: 0 },
          "taskset './refused.py' must export exactly one Taskset class (found: Sized, Runtimes, Boxed, Silent, Tooled, Judged); name one with \"name\"",
        ],
        [{ taskset: "./refused.py", name: "Nope", index: 0 }, "taskset './refused.py' has no Taskset class 'Nope'"],
        [
          { taskset: "./refused.py", name: "Sized", index: 0, config: { words: "many" } },
          "taskset './refused.py': config.words: Input should be a valid integer, unable to parse string as an integer (1 error(s))",
        ],
        // The config reaches the taskset: one word, so one task.
        [
          { taskset: "./refused.py", name: "Sized", index: 1, config: { words: 1 } },
          "taskset './refused.py' has no task 1 (it has 1)",
        ],
        [
          { taskset: "./refused.py", name: "Runtimes", index: 0 },
          "task 0 of taskset './refused.py': reward 'ran' needs a runtime (a sandbox), which ARL's verifiers program does not provide",
        ],
        [
          { taskset: "./refused.py", name: "Boxed", index: 0 },
          "task 0 of taskset './refused.py' needs a container (NEEDS_CONTAINER), which ARL's verifiers program does not run",
        ],
        [
          { taskset: "./refused.py", name: "Silent", index: 0 },
          "task 0 of taskset './refused.py' has no prompt (a conversation the user opens needs verifiers' user simulator)",
        ],
        [
          { taskset: "./refused.py", name: "Tooled", index: 0 },
          "task 0 of taskset './refused.py' offers tools from MCP tool servers (toolsets), which ARL's verifiers program does not run",
        ],
        [
          { taskset: "./refused.py", name: "Judged", index: 0 },
          "task 0 of taskset './refused.py' is scored by judges, which call a model: at OPENAI_BASE_URL they would be the policy's own turns",
        ],
        [
          { taskset: "./broken.py", index: 0 },
          "taskset './broken.py' failed to import: RuntimeError: the taskset cannot start",
        ],
        [
          { taskset: "./missing.py", index: 0 },
          `taskset file './missing.py' does not exist (it is read relative to the spec's folder, ${dir})`,
        ],
        [{ index: 0 }, 'the task line names no taskset (write {"taskset": "./my_tasks.py", "index": 0})'],
      ];
      // The program's main() once per case in one interpreter (verifiers imported once, not twelve
      // times on a busy machine), stdin and the streams its own, exit codes read from SystemExit.
      const program = fileURLToPath(new URL("../../stdlib/std/agents/verifiers_taskset.py", import.meta.url));
      // No model to call: a call would fail to connect, and none of these gets that far.
      const env = { ...process.env, OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "none" };
      const stdin = JSON.stringify(cases.map(([task]) => `${JSON.stringify({ task, task_id: 0, seed: 0 })}\n`));
      const driven = await finished(envServersPython, ["-c", DRIVE_MAIN, program], { cwd: dir, env, stdin });
      expect(driven.code, driven.stderr).toBe(0);
      const runs = JSON.parse(driven.stdout) as { code: number | null; stdout: string; stderr: string }[];
      runs.forEach((run, i) => {
        const [task, reason] = cases[i]!;
        expect({ code: run.code, stdout: run.stdout, stderr: run.stderr }, JSON.stringify(task)).toEqual({
          code: 3,
          stdout: "",
          stderr: `verifiers taskset: ${reason}\n`,
        });
      });
    }, 300_000);

    it("makes a raising reward, an unimportable taskset and a missing task env errors, one line each", async () => {
      const faults = [
        {
          line: { taskset: "./raising_tasks.py", index: 0 },
          reason: /^verifiers taskset: scoring task 0 raised ValueError: the reply has no number$/,
        },
        {
          line: { taskset: "no_such_taskset_module", index: 0 },
          reason:
            /^verifiers taskset: taskset 'no_such_taskset_module' is not importable: module 'no_such_taskset_module' not found on the env servers' Python$/,
        },
        {
          line: { taskset: "./echo_tasks.py", index: 9 },
          reason: /^verifiers taskset: taskset '.\/echo_tasks.py' has no task 9 \(it has 4\)$/,
        },
      ];
      // One run a fault (a task file of one line), the three at once.
      const runs = await Promise.all(
        faults.map(async ({ line }) => {
          const dir = mkdtempSync(path.join(tmpdir(), "arl-verifiers-fault-"));
          writeFileSync(path.join(dir, "raising_tasks.py"), RAISING);
          writeFileSync(path.join(dir, "echo_tasks.py"), TASKSET);
          const spec = writeSpec(dir, {
            lines: [line],
            iterations: 1,
            signals: "judged { scope: outcome, type: number }",
            reward: "judged: outcome.judged",
            allTrain: true,
          });
          return { dir, ...(await arlRun(spec, path.join(dir, "out"))) };
        }),
      );
      runs.forEach(({ dir, status, output }, i) => {
        // Every episode of the first batch failed: the run stops with the reason rather than train on nothing.
        expect(status, output).not.toBe(0);
        expect(output).toMatch(
          /every episode of the first batch \(2\) ended in an env error, so the run stops rather than train on nothing/,
        );
        const logs = path.join(dir, "out", "echo", "default");
        const agentLogs = path.join(logs, readdirSync(logs)[0]!, "agent-logs");
        const reasons = readdirSync(agentLogs).map(
          (f) => readFileSync(path.join(agentLogs, f), "utf8").split("\n")[0]!,
        );
        expect(reasons).toHaveLength(2);
        for (const reason of reasons) {
          expect(reason).toMatch(/verifiers_taskset\.py' exited with code 3: /);
          expect(reason.slice(reason.indexOf("exited with code 3: ") + "exited with code 3: ".length)).toMatch(
            faults[i]!.reason,
          );
        }
      });
    }, 420_000);
  },
);
