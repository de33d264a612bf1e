// The `agent` env kind (src/envs/adapters/agent.ts) and its lowering: tasks are the task file's lines
// (hashed into the plan, confined to the data root, checked against the plan's sha256), the
// vocabulary is their words, reset/step is refused (the runtime plays agent episodes through
// the gateway), and the spec's faults are diagnostics at the field: tool blocks, more tasks than
// lines, a line that is not a JSON object, a command word the runtime cannot resolve (std:, python:), a task line that does not fit the
// schema of the stdlib program that reads it. Episodes themselves: test/runtime/agent-episode.test.ts.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { resolveAgentCommand } from "../../src/contracts/agent-command.js";
import { EnvError } from "../../src/contracts/env.js";
import { STDLIB_ROOT } from "../../src/contracts/paths.js";
import { agentTasks, createAgentEnv, type AgentEnv } from "../../src/envs/adapters/agent.js";
import { agentPlan } from "../helpers/agent-plans.js";

const TASKS = [{ question: "where is order A1" }, { question: "refund order B2" }, { question: "hello" }];

function checked(dir: string, env: string): { code: string; line: number }[] {
  writeFileSync(
    path.join(dir, "s.arl"),
    `import "std/envs/agent" as agent
experiment e {
  policy { model: "builtin:tiny" }
  env a extends agent.program {
${env}
    signals { ok { scope: outcome, type: bool } }
  }
  reward { ok: outcome.ok }
  eval { success: outcome.ok }
}
`,
  );
  return new Compiler()
    .check(path.join(dir, "s.arl"))
    .diagnostics.filter((d) => d.severity === "error")
    .map((d) => ({ code: d.code, line: d.range.start.line }));
}

describe("env kind agent", () => {
  it("has the task file's lines as its tasks, hashed into the plan; the words of the tasks as vocabulary; no reset/step", async () => {
    const { dir, plan } = agentPlan(["python3", "a.py"], TASKS);
    const env = plan.envs.helper as AgentEnv;
    expect(env).toMatchObject({
      kind: "agent",
      tasks: 3,
      command: ["python3", "a.py"],
      timeout_s: 120,
      max_stderr_bytes: 65536,
      task_file: { path: "tasks.jsonl" },
    });
    expect(env.task_file.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(plan.tools).toEqual([]);
    expect(agentTasks(env, dir)).toEqual(TASKS);
    const kind = createAgentEnv({ root: dir });
    expect(kind.vocabulary(env)).toEqual(
      expect.arrayContaining(["order", "A1", "refund", "question", "function", "parameters"]),
    );
    await expect(kind.create(env, 0, 0)).rejects.toThrow(/played by the runtime/);
    // The file changed after compiling, or no data root: refused by name, never read as other data.
    expect(() => agentTasks(env, undefined)).toThrow(EnvError);
    writeFileSync(path.join(dir, "tasks.jsonl"), `${JSON.stringify({ question: "changed" })}\n`);
    expect(() => agentTasks(env, dir)).toThrow(/has sha256 .* but the plan was compiled against/);
  });

  it("reports tool blocks, more tasks than the file has and a bad line at the field", () => {
    const { dir } = agentPlan(
      ["x"],
      Array.from({ length: 10 }, (_, i) => ({ n: i })),
    );
    const base = '    command: ["python3", "a.py"]\n    task_file: "./tasks.jsonl"';
    expect(checked(dir, `${base}\n    tasks: 5`)).toEqual([]);
    expect(checked(dir, `${base}\n    tasks: 11`)).toEqual([{ code: "agent-tasks-beyond-file", line: 7 }]);
    expect(checked(dir, `${base}\n    tool t { description: "x" }`)).toEqual([{ code: "agent-env-tools", line: 7 }]);
    writeFileSync(path.join(dir, "bad.jsonl"), '{"a": 1}\n[1, 2]\n');
    expect(checked(dir, '    command: ["python3", "a.py"]\n    task_file: "./bad.jsonl"')).toEqual([
      { code: "agent-task-file-invalid", line: 6 },
    ]);
    expect(
      checked(dir, '    command: ["python3", "a.py"]\n    task_file: "./missing.jsonl"').map((d) => d.code),
    ).toEqual(["data-file-not-found"]);
  });

  it("resolves std: and python: words on this machine and reports those it cannot at the command", () => {
    const { dir } = agentPlan(
      ["x"],
      Array.from({ length: 10 }, (_, i) => ({ taskset: "./t.py", index: i })),
    );
    const file = '\n    task_file: "./tasks.jsonl"';
    expect(checked(dir, `    command: ["python:envservers", "std:agents/verifiers_taskset.py"]${file}`)).toEqual([]);
    for (const command of [
      '["python:conda", "a.py"]',
      '["python:toString", "a.py"]',
      '["python3", "std:agents/missing.py"]',
      '["python3", "std:../envs/agent.arl"]',
      '["python3", "std:/etc/passwd"]',
    ]) {
      expect(checked(dir, `    command: ${command}${file}`), command).toEqual([
        { code: "agent-command-word", line: 5 },
      ]);
    }
    // Only a first word names a Python; elsewhere python:... is an argument like any other.
    expect(checked(dir, `    command: ["python3", "python:conda"]${file}`)).toEqual([]);
    // python:envservers is $ARL_ENVSERVERS_PYTHON when set (else the package's .venv-envservers).
    vi.stubEnv("ARL_ENVSERVERS_PYTHON", "/opt/servers/bin/python");
    const resolved = resolveAgentCommand(["python:envservers", "std:agents/verifiers_taskset.py", "--x", "std:"]);
    expect(resolved).toEqual([
      "/opt/servers/bin/python",
      path.join(STDLIB_ROOT, "std/agents/verifiers_taskset.py"),
      "--x",
      "std:",
    ]);
    vi.unstubAllEnvs();
  });

  it("types the task lines of a stdlib program that ships their schema (std/envs/verifiers's), reporting the file line", () => {
    const { dir } = agentPlan(["x"], TASKS);
    const env = '    command: ["python:envservers", "std:agents/verifiers_taskset.py"]\n    task_file: "./vf.jsonl"';
    const write = (lines: readonly object[]) =>
      writeFileSync(path.join(dir, "vf.jsonl"), `${lines.map((l) => JSON.stringify(l)).join("\n\n")}\n`);
    const fine = Array.from({ length: 10 }, (_, i) => ({
      taskset: "./t.py",
      index: i,
      ...(i === 1 ? { name: "T", config: { task: {} } } : {}),
    }));
    write(fine);
    expect(checked(dir, env)).toEqual([]);
    const misfits: [object, RegExp][] = [
      [{ taskset: "./t.py" }, /the line has no 'index'$/],
      [{ taskset: "./t.py", index: -1 }, /'index' must be >= 0$/],
      [{ taskset: "./t.py", index: 1.5 }, /'index' must be integer$/],
      [{ taskset: 3, index: 0 }, /'taskset' must be string$/],
      [{ taskset: "./t.py", index: 0, taskst: "x" }, /'taskst' is not a field the program reads$/],
    ];
    for (const [misfit, problem] of misfits) {
      // The tenth task, on line 19 (a blank line between tasks).
      write([...fine.slice(0, 9), misfit]);
      const found = new Compiler().check(path.join(dir, "s.arl")).diagnostics.filter((d) => d.severity === "error");
      expect(
        found.map((d) => [d.code, d.range.start.line]),
        JSON.stringify(misfit),
      ).toEqual([["agent-task-invalid", 6]]);
      expect(found[0]?.message).toMatch(
        /^env 'a': line 19 of the task file '.\/vf.jsonl' is not a task std:agents\/verifiers_taskset.py reads: /,
      );
      expect(found[0]?.message).toMatch(problem);
    }
    // Another program's lines are its own business.
    write([{ anything: true }, ...fine.slice(1)]);
    expect(checked(dir, '    command: ["python3", "a.py"]\n    task_file: "./vf.jsonl"')).toEqual([]);
  });

  it("confines the task file to the experiment's folder: refused at lowering and, in a plan, at run time, never read", () => {
    const { dir, plan } = agentPlan(["x"], TASKS);
    const outside = mkdtempSync(path.join(tmpdir(), "arl-agent-outside-"));
    writeFileSync(path.join(outside, "secret.jsonl"), '{"secret": "do not read"}\n');
    const relative = path.relative(dir, path.join(outside, "secret.jsonl"));
    const refused = checked(dir, `    command: ["python3", "a.py"]\n    task_file: ${JSON.stringify(relative)}`);
    expect(refused).toEqual([{ code: "data-file-outside-root", line: 6 }]);
    const env = { ...(plan.envs.helper as AgentEnv), task_file: { path: relative, sha256: "0".repeat(64) } };
    expect(() => agentTasks(env, dir)).toThrow(/is refused: .* it was not read/);
  });
});
