// The code behind an env is part of the plan's identity (src/plan/lower-code-files.ts): an agent
// program's files (a file its command names, a folder's files), a verifiers taskset's module and
// a gymnasium entry point's module, in the spec's folder, are hashed into the plan; editing one
// changes the plan's hash, and `arl check` against the lock written before reports lock-mismatch.
// An env that names no code of the user's keeps its plan as it was (no `code`).
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { lowerModel } from "../../src/plan/lower.js";
import type { Plan } from "../../src/plan/schema.js";
import { sha256File } from "../../src/plan/hash.js";
import { runArl } from "../helpers/cli.js";

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-env-code-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

function planOf(dir: string): Plan {
  const result = new Compiler().check(path.join(dir, "spec.arl"));
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0 || !result.model) throw new Error(errors.map((e) => e.message).join("\n"));
  return lowerModel(result.model).plans[0]!.plan;
}

const agentSpec = (
  command: readonly string[],
  taskFile = "./tasks.jsonl",
  preset = 'import "std/envs/agent" as agent',
  base = "agent.program",
) => `
${preset}
experiment coded {
  policy { model: "builtin:tiny" }
  env helper extends ${base} {
    ${command.length > 0 ? `command: ${JSON.stringify(command)}` : ""}
    task_file: "${taskFile}"
    split { train: 0.5, test: 0.5 }
    signals { ok { scope: outcome, type: bool } }
  }
  reward { ok: outcome.ok }
  algorithm { group_size: 2 }
  eval { success: outcome.ok }
}
`;

const gymSpec = `
import "std/envs/gymnasium" as gym
experiment coded {
  policy { model: "builtin:tiny" }
  env guess extends gym.text_env { entry_point: "my_envs.guess:GuessEnv" }
  reward { r: outcome.reward }
  algorithm { group_size: 2 }
  eval { success: outcome.terminated }
}
`;

/** The plan's hash before and after appending `edit` to the folder's file `file`, and the env's code files before. */
function hashesAround(dir: string, file: string, env: string): { before: string; after: string; code: unknown } {
  const plan = planOf(dir);
  appendFileSync(path.join(dir, file), "\n# edited\n");
  return { before: plan.hash, after: planOf(dir).hash, code: (plan.envs[env] as { code?: unknown }).code };
}

describe("the code behind an env is part of the plan's identity", () => {
  it("an agent program's file: editing it changes the hash, and the lock then mismatches", async () => {
    const dir = folder({
      "spec.arl": agentSpec(["python3", "./agent.py"]),
      "agent.py": "print('{}')\n",
      "tasks.jsonl": '{"q": 1}\n{"q": 2}\n',
    });
    const plan = planOf(dir);
    expect((plan.envs.helper as { code?: unknown }).code).toEqual([
      { path: "agent.py", sha256: sha256File(path.join(dir, "agent.py")) },
    ]);
    const locked = await runArl(["lock", "spec.arl"], { cwd: dir });
    expect(locked.code, locked.stderr).toBe(0);
    expect((await runArl(["check", "spec.arl"], { cwd: dir })).code).toBe(0);
    appendFileSync(path.join(dir, "agent.py"), "print('changed')\n");
    const checked = await runArl(["check", "spec.arl"], { cwd: dir });
    expect(checked.code).toBe(1);
    expect(checked.stdout + checked.stderr).toContain("lock-mismatch");
  });

  it("a folder the command names: each of its files, caches and hidden files aside", () => {
    const dir = folder({
      "spec.arl": agentSpec(["python3", "-m", "solver", "--root", "./solver"]),
      "solver/__main__.py": "import solver.helper\n",
      "solver/helper.py": "X = 1\n",
      "solver/__pycache__/helper.cpython-312.pyc": "bytes",
      "solver/.notes": "scratch",
      "tasks.jsonl": '{"q": 1}\n{"q": 2}\n',
    });
    const { before, after, code } = hashesAround(dir, "solver/helper.py", "helper");
    expect((code as { path: string }[]).map((f) => f.path)).toEqual(["solver/__main__.py", "solver/helper.py"]);
    expect(after).not.toBe(before);
  });

  it("a verifiers taskset's module, named by a task line", () => {
    const dir = folder({
      "spec.arl": agentSpec([], "./math-tasks.jsonl", 'import "std/envs/verifiers" as vf', "vf.taskset"),
      "my_tasks.py": "import verifiers as vf\n",
      "math-tasks.jsonl": '{"taskset": "./my_tasks.py", "index": 0}\n{"taskset": "./my_tasks.py", "index": 1}\n',
    });
    const { before, after, code } = hashesAround(dir, "my_tasks.py", "helper");
    expect((code as { path: string }[]).map((f) => f.path)).toEqual(["my_tasks.py"]);
    expect(after).not.toBe(before);
  });

  it("a gymnasium entry point's module", () => {
    const dir = folder({
      "spec.arl": gymSpec,
      "my_envs/__init__.py": "",
      "my_envs/guess.py": "class GuessEnv: pass\n",
    });
    const { before, after, code } = hashesAround(dir, "my_envs/guess.py", "guess");
    expect((code as { path: string }[]).map((f) => f.path)).toEqual(["my_envs/guess.py"]);
    expect(after).not.toBe(before);
  });

  it("an env that names no code of the user's has no `code`, and its plan is unchanged by other files", () => {
    const dir = folder({
      "spec.arl": agentSpec(["python3", "-c", "print(1)"]),
      "tasks.jsonl": '{"q": 1}\n{"q": 2}\n',
      "unrelated.py": "",
    });
    const { before, after, code } = hashesAround(dir, "unrelated.py", "helper");
    expect(code).toBeUndefined();
    expect(after).toBe(before);
  });
});
