// kind: agentrl against AgentRL's own task worker (agentrl-worker 0.4.0, `python -m
// agentrl.worker`) serving a counter task written here, on loopback: episodes, the session
// cancelled on every path, the tools compared at provision, a worker killed mid-episode, a run
// end to end. Controller mode goes through a stand-in controller written here (agentrl-eval 0.1.2
// installs, but ships the controller's client, not the controller): it forwards to the real worker
// with the controller's shapes as agentrl-eval's ControllerClient sends and reads them. Malformed
// answers come from a Node server that answers the API's routes with broken bodies.
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import type { DeclaredTool, EnvInstance } from "../../src/contracts/env.js";
import { agentrlEnv, type AgentRlEnv } from "../../src/envs/adapters/agentrl.js";
import { envKinds } from "../../src/envs/registry.js";
import { executePlan } from "../../src/runtime/orchestrator.js";
import { RunDirectory } from "../../src/runtime/run-dir.js";
import { readBuffer } from "../../src/episode/buffer.js";
import { splitTasks } from "../../src/plan/splits.js";
import { compilePlans, scriptedTrainerScript } from "../helpers/plans.js";
import {
  AGENTRL_COUNTER_TASK,
  COMMON_ENV_FIELDS,
  ENV_SERVERS_NEED,
  envFailure as failure,
  envServersAvailable,
  freePort,
  startPython,
  type ServerProcess,
} from "../helpers/env-servers.js";

// The controller's side as agentrl-eval's ControllerClient uses it: start_sample {name, index,
// custom_task} answered with a session_id header; interact and cancel carry session_id in a header;
// interact's answer is the env output itself.
const CONTROLLER = `
import itertools, sys
import httpx, uvicorn
from fastapi import FastAPI, Header, Request
from fastapi.responses import JSONResponse

worker = sys.argv[1]
ids = itertools.count(1000)
app = FastAPI()
client = httpx.AsyncClient(base_url=worker, timeout=None)

def passed(r):
    return JSONResponse(r.json(), status_code=r.status_code)

@app.get("/api/get_indices")
async def get_indices(name: str):
    return passed(await client.get("/get_indices")) if name == "counter" else JSONResponse({"detail": "no such task"}, 400)

@app.post("/api/start_sample")
async def start_sample(request: Request):
    body = await request.json()
    sid = next(ids)
    r = await client.post("/start_sample", json={"index": body["index"], "session_id": sid})
    return JSONResponse(r.json(), status_code=r.status_code, headers={"session_id": str(sid)})

@app.post("/api/interact")
async def interact(request: Request, session_id: int = Header(convert_underscores=False)):
    body = await request.json()
    r = await client.post("/interact", json={"session_id": session_id, "messages": body["messages"]})
    return JSONResponse(r.json()["env_out"] if r.status_code == 200 else r.json(), status_code=r.status_code)

@app.post("/api/cancel")
async def cancel(session_id: int = Header(convert_underscores=False)):
    return passed(await client.post("/cancel", json={"session_id": session_id}))

uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
`;

const available = envServersAvailable();
const dir = mkdtempSync(path.join(tmpdir(), "arl-agentrl-"));
const NO_ARGS = { type: "object", properties: {}, required: [], additionalProperties: false };
const TOOLS: DeclaredTool[] = [
  {
    name: "noop",
    description: "do nothing",
    parameters: { $schema: "https://json-schema.org/draft/2020-12/schema", ...NO_ARGS },
  },
  { name: "step", description: "advance the counter", parameters: NO_ARGS },
];

async function startWorker(hangIndex = -2): Promise<ServerProcess & { url: string }> {
  writeFileSync(path.join(dir, "counter_task.py"), AGENTRL_COUNTER_TASK);
  const config = `worker-${hangIndex}.yaml`;
  writeFileSync(
    path.join(dir, config),
    `counter:\n  module: counter_task.Counter\n  parameters:\n    name: counter\n    concurrency: 3\n    hang_index: ${hangIndex}\n`,
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/api`;
  const server = await startPython(
    [
      "-m",
      "agentrl.worker",
      "counter",
      "-c",
      config,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--log-level",
      "WARNING",
    ],
    dir,
    port,
    `${url}/worker_status`,
  );
  return Object.assign(server, { url });
}

function makeEnv(url: string, overrides: Partial<AgentRlEnv> = {}): AgentRlEnv {
  return {
    kind: "agentrl",
    ...COMMON_ENV_FIELDS,
    tasks: 4,
    timeout_s: 10,
    retries: 1,
    task: "counter",
    url,
    mode: "worker",
    max_response_bytes: 1 << 20,
    ...overrides,
  };
}

const call = (name: string) => ({ name, arguments: {} });
const running = async (url: string) =>
  ((await (await fetch(`${url}/worker_status`)).json()) as { current: number }).current;
const provision = (env: AgentRlEnv, tools = TOOLS, log: string[] = []) =>
  agentrlEnv.provision!(env, { name: "counter", tools, runDir: dir, log: (l) => log.push(l) });

describe.skipIf(!available)(skipTitle("agentrl env against agentrl-worker 0.4.0", !available, ENV_SERVERS_NEED), () => {
  let worker: ServerProcess & { url: string };
  let controller: ServerProcess & { url: string };
  beforeAll(async () => {
    worker = await startWorker();
    writeFileSync(path.join(dir, "controller.py"), CONTROLLER);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/api`;
    controller = Object.assign(
      await startPython(["controller.py", worker.url, String(port)], dir, port, `${url}/get_indices?name=counter`),
      { url },
    );
  }, 240_000);
  afterAll(async () => {
    await controller?.kill();
    await worker?.kill();
  });

  for (const mode of ["worker", "controller"] as const) {
    it(`${mode} mode: an episode to the task's end, its messages, tool results and reward as signals`, async () => {
      const env = makeEnv(mode === "worker" ? worker.url : controller.url, { mode });
      const log: string[] = [];
      await provision(env, TOOLS, log);
      expect(log.join("\n")).toContain("serves 4 samples; its tools match the plan's");
      const episode = await agentrlEnv.create(env, 2, 7);
      const first = await episode.reset();
      expect(first.messages).toEqual([
        { role: "system", content: "Call step until the counter reaches 2." },
        { role: "user", content: "Task 2: reach 2." },
      ]);
      const one = await episode.step(call("step"));
      expect(one).toMatchObject({
        text: "counter 1 of 2",
        terminated: false,
        signals: { reward: 0, status: "running", completed: false },
      });
      expect(await running(worker.url)).toBe(1);
      const two = await episode.step(call("step"));
      expect(two).toMatchObject({ text: "counter 2 of 2", terminated: true });
      expect(await episode.outcome()).toEqual({
        reward: 1,
        success: 1,
        score: 1,
        status: "completed",
        completed: true,
      });
      await episode.close();
      expect(await running(worker.url)).toBe(0);
    });

    it(`${mode} mode: an episode ended before the task's end cancels its session`, async () => {
      const env = makeEnv(mode === "worker" ? worker.url : controller.url, { mode });
      const episode = await agentrlEnv.create(env, 1, 7);
      await episode.reset();
      await episode.step(call("noop"));
      expect(await running(worker.url)).toBe(1);
      await episode.close();
      expect(await running(worker.url)).toBe(0);
    });
  }

  it("a turn without a tool call is sent as the final answer; the task's verdict is the outcome", async () => {
    const episode = await agentrlEnv.create(makeEnv(worker.url), 0, 1);
    await episode.reset();
    expect(await episode.finalAnswer!("I give up")).toMatchObject({
      reward: 0,
      status: "agent validation failed",
      completed: false,
    });
    await episode.close();
    expect(await running(worker.url)).toBe(0);
  });

  it("provision refuses tools that differ from the server's, showing both schemas; arguments the server lacks count", async () => {
    const changed: DeclaredTool[] = [
      TOOLS[0]!,
      {
        name: "step",
        description: "advance",
        parameters: {
          type: "object",
          properties: { by: { type: "integer" } },
          required: ["by"],
          additionalProperties: false,
        },
      },
    ];
    const error = await failure(provision(makeEnv(worker.url), changed));
    expect(error.kind).toBe("protocol");
    expect(error.message).toContain("tool 'step' has other parameters than the server's");
    expect(error.message).toContain(
      'declared: {"additionalProperties":false,"properties":{"by":{"type":"integer"}},"required":["by"],"type":"object"}',
    );
    expect(error.message).toContain('server:   {"additionalProperties":false,"properties":{},"type":"object"}');
    const missing = await failure(
      provision(makeEnv(worker.url), [...TOOLS, { name: "jump", description: "", parameters: NO_ARGS }]),
    );
    expect(missing.message).toContain(
      "tool 'jump' is declared but the server has no tool of that name (it has 'step', 'noop')",
    );
    expect(await running(worker.url)).toBe(0); // the probe's session was cancelled
  });

  it("more tasks than the server has samples is refused at provision", async () => {
    const error = await failure(provision(makeEnv(worker.url, { tasks: 9 })));
    expect(error.message).toContain("AgentRL server has 4 samples of task 'counter', but the plan declares tasks: 9");
  });

  it("a worker killed mid-episode is an env error; a step past timeout_s is one too, and its session is cancelled", async () => {
    const own = await startWorker(3);
    try {
      const env = makeEnv(own.url, { timeout_s: 2, retries: 0 });
      const hanging = await agentrlEnv.create(env, 3, 1);
      await hanging.reset();
      expect((await failure(hanging.step(call("step")))).kind).toBe("timeout");
      await hanging.close();
      expect(await running(own.url)).toBe(0);
      const episode: EnvInstance = await agentrlEnv.create(env, 0, 1);
      await episode.reset();
      await episode.step(call("step"));
      await own.kill();
      expect(["unavailable", "crash"]).toContain((await failure(episode.step(call("step")))).kind);
      expect((await failure(episode.close())).kind).toBe("unavailable");
    } finally {
      await own.kill();
    }
  }, 240_000);

  it("a run end to end: two iterations, the hanging task's episodes env errors, the others played, every session ended", async () => {
    const spec = (url: string) => `
experiment agentrl_counting {
  seed: 5
  policy { model: "builtin:tiny" }
  env counter {
    kind: agentrl
    url: "${url}"
    tasks: 4
    split { train: 0.5, test: 0.5 }
    timeout_s: 2
    retries: 0
    signals {
      completed { scope: outcome, type: bool }
    }
    tool step { description: "advance the counter" }
    tool noop { description: "do nothing" }
  }
  harness { max_turns: 4 }
  reward { success: outcome.completed }
  algorithm {
    group_size: 2
    advantage { baseline: leave_one_out }
  }
  rollout { tasks_per_batch: 2, iterations: 2, concurrency: 4 }
  eval { every: 2, tasks: 1, k: [1], success: outcome.completed }
}
`;
    const [probe] = compilePlans(spec("http://127.0.0.1:8000/api"));
    const hang = splitTasks("counter", probe!.envs.counter!, "train")[0]!;
    const own = await startWorker(hang);
    try {
      const [plan] = compilePlans(spec(own.url));
      const runDir = RunDirectory.create(mkdtempSync(path.join(tmpdir(), "arl-agentrl-run-")), plan!);
      const summary = await executePlan({
        plan: plan!,
        runDir,
        trainer: { file: process.execPath, args: [scriptedTrainerScript] },
        envs: envKinds,
        log: () => undefined,
      });
      expect(summary.iterations).toBe(2);
      const metrics = runDir.readMetrics();
      expect(metrics.map((m) => m.iteration)).toEqual([1, 2]);
      const { records } = readBuffer(runDir.bufferPath);
      const errored = records.filter((r) => r.end === "env_error");
      expect(errored.length).toBeGreaterThan(0);
      expect(errored.every((r) => r.task === hang)).toBe(true);
      expect(records.some((r) => r.task !== hang && r.end === "finished")).toBe(true);
      expect(metrics.reduce((s, m) => s + (m.env_errors as number), 0)).toBe(errored.length);
      expect(await running(own.url)).toBe(0);
    } finally {
      await own.kill();
    }
  }, 240_000);
});

describe("agentrl env: malformed answers are protocol errors", () => {
  let server: Server;
  let url = "";
  const answers = new Map<string, { status?: number; body: string; headers?: Record<string, string> }>();
  beforeAll(async () => {
    server = createHttpServer((req, res) => {
      const api = (req.url ?? "").split("?")[0]!.replace(/^\/api\//, "");
      const a = answers.get(api) ?? { status: 404, body: "{}" };
      res.writeHead(a.status ?? 200, { "content-type": "application/json", ...a.headers });
      res.end(a.body);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/api`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const started = (overrides: Record<string, unknown>) =>
    JSON.stringify({
      messages: [{ role: "user", content: "go" }],
      tools: [],
      status: "running",
      finish: false,
      reward: 0,
      metric: {},
      ...overrides,
    });
  const cases: [string, string, () => void][] = [
    [
      "indices that are not a list",
      "get_indices answer is not a JSON array",
      () => answers.set("get_indices", { body: '{"a":1}' }),
    ],
    ["a body that is not JSON", "something that is not JSON", () => answers.set("start_sample", { body: "<html>" })],
    [
      "messages that are not a list",
      '"messages" that is not a list of message objects',
      () => answers.set("start_sample", { body: started({ messages: "hi" }) }),
    ],
    [
      "a reward that is not a number",
      '"reward" that is not a finite number',
      () => answers.set("start_sample", { body: started({ reward: "1" }) }),
    ],
    [
      "a body past max_response_bytes",
      "above the env's max_response_bytes",
      () => answers.set("start_sample", { body: started({ messages: [{ role: "user", content: "x".repeat(5000) }] }) }),
    ],
    [
      "a 422 (the request was refused)",
      "answered HTTP 422",
      () => answers.set("start_sample", { status: 422, body: '{"detail":"bad"}' }),
    ],
  ];
  for (const [what, message, arrange] of cases) {
    it(what, async () => {
      answers.clear();
      answers.set("get_indices", { body: "[0,1]" });
      arrange();
      const episode = await agentrlEnv.create(
        makeEnv(url, { tasks: 2, task: `malformed-${what}`, max_response_bytes: 4096, retries: 0 }),
        0,
        1,
      );
      const error = await failure(episode.reset());
      expect(error.kind).toBe("protocol");
      expect(error.message).toContain(message);
    });
  }

  it("a controller's start_sample without a session_id header; a 'task error' status is a crash", async () => {
    answers.clear();
    answers.set("get_indices", { body: "[0]" });
    answers.set("start_sample", { body: started({}) });
    const controller = await agentrlEnv.create(
      makeEnv(url, { tasks: 1, task: "c1", mode: "controller", retries: 0 }),
      0,
      1,
    );
    expect((await failure(controller.reset())).message).toContain("no integer session_id header");
    answers.set("start_sample", { body: started({ status: "task error", finish: true }) });
    const worker = await agentrlEnv.create(makeEnv(url, { tasks: 1, task: "c2", retries: 0 }), 0, 1);
    expect((await failure(worker.reset())).kind).toBe("crash");
  });
});
