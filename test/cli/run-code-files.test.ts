// `arl run` checks the env code a plan names (an agent program's file, hashed into the plan as
// `code`) before it starts a plan file or resumes a run directory: a file edited since the plan was
// lowered is refused with exit 2, naming the file and both sha256s, with what to do. Real files: a
// Python agent program run once through the gateway, then edited on disk.
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { embeddedTrainerFlag } from "../helpers/plans.js";

/** One model call with the standard library, then the outcome on the last stdout line. */
const PROGRAM = `import json, os, sys, urllib.request
task = json.loads(sys.stdin.readline())["task"]
body = json.dumps({"model": "policy", "messages": [{"role": "user", "content": "say " + task["word"]}], "max_tokens": 4}).encode()
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body, headers={"content-type": "application/json", "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
reply = json.loads(urllib.request.urlopen(request).read())["choices"][0]["message"]["content"] or ""
print(json.dumps({"signals": {"said": task["word"] in reply}}))
`;

const SPEC = `import "std/envs/agent" as agent
experiment coded {
  seed: 1
  policy { model: "builtin:tiny?hidden=24&embed=16&heads=2&key=8", sampling { max_new_tokens: 4 } }
  env say extends agent.program {
    command: ["python3", "prog.py"]
    task_file: "./tasks.jsonl"
    signals { said { scope: outcome, type: bool } }
  }
  harness { max_turns: 2, max_response_tokens: 8 }
  reward { success: outcome.said }
  algorithm { group_size: 2, advantage { baseline: leave_one_out } }
  rollout { tasks_per_batch: 2, iterations: 1 }
  eval { every: 1, tasks: 1, before_training: false, success: outcome.said }
}
`;

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("arl run against edited env code", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-run-code-"));
  let runDir = "";
  let planFile = "";
  beforeAll(async () => {
    writeFileSync(path.join(dir, "prog.py"), PROGRAM);
    writeFileSync(
      path.join(dir, "tasks.jsonl"),
      ["red", "blue", "green", "gold", "grey", "pink", "teal", "navy", "rose", "lime"]
        .map((word) => `${JSON.stringify({ word })}\n`)
        .join(""),
    );
    writeFileSync(path.join(dir, "spec.arl"), SPEC);
    const run = await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const variants = path.join(dir, "runs", "coded", "default");
    runDir = path.join("runs", "coded", "default", readdirSync(variants)[0]!);
    planFile = path.join(runDir, "plan.json");
  }, 120_000);

  it("the plan holds the program's sha256", () => {
    const plan = JSON.parse(readFileSync(path.join(dir, planFile), "utf8")) as {
      envs: { say: { code?: { path: string; sha256: string }[] } };
    };
    expect(plan.envs.say.code).toEqual([{ path: "prog.py", sha256: sha256(PROGRAM) }]);
  });

  it("refuses a plan file and a resume once the program changed, naming the file and both hashes (exit 2)", async () => {
    const edited = PROGRAM.replace("say ", "repeat ");
    writeFileSync(path.join(dir, "prog.py"), edited);
    try {
      const fromPlan = await runArl(["run", planFile, "--data-root", ".", "--out", "runs2", ...embeddedTrainerFlag], {
        cwd: dir,
      });
      expect(fromPlan.code, fromPlan.stderr).toBe(2);
      expect(fromPlan.stderr).toContain(
        `arl run: env 'say' (agent): the code file 'prog.py' has sha256 ${sha256(edited)}, but the plan was lowered with sha256 ${sha256(PROGRAM)}`,
      );
      expect(fromPlan.stderr).toContain("hint: to run the changed code, lower the spec again");
      expect(readdirSync(dir)).not.toContain("runs2");

      const resumed = await runArl(["run", "--resume", runDir, ...embeddedTrainerFlag], { cwd: dir });
      expect(resumed.code, resumed.stderr).toBe(2);
      expect(resumed.stderr).toContain(`the code file 'prog.py' has sha256 ${sha256(edited)}`);
      expect(resumed.stderr).toContain("restore that file to resume, or start a new run from the spec");
    } finally {
      writeFileSync(path.join(dir, "prog.py"), PROGRAM);
    }
    // Restored, the plan file runs (its code is what it names).
    const again = await runArl(["run", planFile, "--data-root", ".", "--out", "runs3", ...embeddedTrainerFlag], {
      cwd: dir,
    });
    expect(again.code, again.stderr).toBe(0);
  }, 120_000);

  it("names a program file that is gone", async () => {
    renameSync(path.join(dir, "prog.py"), path.join(dir, "prog.bak"));
    try {
      const r = await runArl(["run", planFile, "--data-root", ".", "--out", "runs4", ...embeddedTrainerFlag], {
        cwd: dir,
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        /the code file 'prog\.py' cannot be read \(no file at .*prog\.py\), but the plan was lowered/,
      );
    } finally {
      renameSync(path.join(dir, "prog.bak"), path.join(dir, "prog.py"));
    }
  });
});
