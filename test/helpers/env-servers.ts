// The field's env servers as published (AgentRL's task worker, OpenEnv under uvicorn), started
// on loopback from the venv `npm run setup:envservers` makes (.venv-envservers;
// ARL_ENVSERVERS_PYTHON names another interpreter). Without it the tests that need them skip,
// except under CI, where a missing venv fails them.
import { spawn, type ChildProcess } from "node:child_process";
import { EnvError } from "../../src/contracts/env.js";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

export const envServersPython =
  process.env.ARL_ENVSERVERS_PYTHON ?? fileURLToPath(new URL("../../.venv-envservers/bin/python", import.meta.url));

/** What the tests that use them need, as their names state it when they skip (skipTitle). */
export const ENV_SERVERS_NEED = "needs .venv-envservers: npm run setup:envservers";

/** True when the tests may run; throws under CI when the venv is missing (a skip would hide it). */
export function envServersAvailable(): boolean {
  if (existsSync(envServersPython)) return true;
  if (process.env.CI) throw new Error(`${envServersPython} is missing: run npm run setup:envservers (.ci/run does)`);
  return false;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly port: number;
  /** What the process wrote (stdout and stderr), for a failed test's message. */
  output(): string;
  /** SIGKILL, then waits for its exit. */
  kill(): Promise<void>;
}

/** Starts `args` under the env servers' Python in `cwd` (with `env` added to the environment) and waits until `ready` (a URL) answers 200. */
export async function startPython(
  args: readonly string[],
  cwd: string,
  port: number,
  ready: string,
  env: Record<string, string> = {},
  timeoutMs = 150_000,
): Promise<ServerProcess> {
  const child = spawn(envServersPython, [...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PYTHONUNBUFFERED: "1", ...env },
  });
  let output = "";
  child.stdout?.on("data", (c: Buffer) => (output = (output + c.toString()).slice(-20_000)));
  child.stderr?.on("data", (c: Buffer) => (output = (output + c.toString()).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const server: ServerProcess = {
    child,
    port,
    output: () => output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${args.join(" ")} exited with ${child.exitCode}:\n${output}`);
    const ok = await fetch(ready).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return server;
    if (Date.now() > deadline) {
      await server.kill();
      throw new Error(`${args.join(" ")} did not answer ${ready} within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The fields every env kind has, as a plan holds them (tasks aside), the tasks split in halves. */
export const COMMON_ENV_FIELDS = {
  description: null,
  version: "1",
  split: { train: 0.5, valid: 0, test: 0.5 },
  weight: 1,
  signals: {},
  optimal_steps: null,
  budget_is_task_rule: false,
  reward_range: [0, 1] as [number, number],
} as const;

/** The EnvError `p` rejects with (anything else fails the test). */
export function envFailure(p: Promise<unknown>): Promise<EnvError> {
  return p.then(
    () => {
      throw new Error("expected an EnvError");
    },
    (e: unknown) => {
      if (!(e instanceof EnvError)) throw e;
      return e;
    },
  );
}

/**
 * An AgentRL worker task (module counter_task.Counter): call `step` twice to win, `noop` does
 * nothing; the parameter hang_index names an index that waits forever after its first call.
 */
export const AGENTRL_COUNTER_TASK = `
import asyncio
from agentrl.worker.task import Task
from agentrl.worker.typings import RewardHistoryItem, SampleStatus, TaskSampleExecutionResult

NO_ARGS = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
TOOLS = [
    {"type": "function", "function": {"name": "step", "description": "advance the counter", "parameters": NO_ARGS}},
    {"type": "function", "function": {"name": "noop", "description": "do nothing", "parameters": NO_ARGS}},
]

class Counter(Task):
    """Call step twice to win; index HANG waits forever after its first call."""

    def __init__(self, hang_index=-2, **kwargs):
        super().__init__(tools=TOOLS, full_async=True, **kwargs)
        self.hang_index = hang_index

    def get_indices(self):
        return [0, 1, 2, 3]

    async def start_sample(self, index, session):
        session.inject({"role": "system", "content": "Call step until the counter reaches 2."})
        session.inject({"role": "user", "content": f"Task {index}: reach 2."})
        count = 0
        for _ in range(6):
            answer = await session.action()
            calls = answer.messages[0].get("tool_calls") or []
            if not calls:
                session.inject(RewardHistoryItem(reward=0, score=0))
                return TaskSampleExecutionResult(status=SampleStatus.AGENT_VALIDATION_FAILED)
            if index == self.hang_index:
                await asyncio.sleep(3600)
            if calls[0]["function"]["name"] == "step":
                count += 1
            session.inject({"role": "tool", "tool_call_id": calls[0]["id"], "content": f"counter {count} of 2"})
            if count >= 2:
                session.inject(RewardHistoryItem(reward=1, score=1.0))
                return TaskSampleExecutionResult(status=SampleStatus.COMPLETED)
        session.inject(RewardHistoryItem(reward=0, score=0))
        return TaskSampleExecutionResult(status=SampleStatus.TASK_LIMIT_REACHED)
`;
