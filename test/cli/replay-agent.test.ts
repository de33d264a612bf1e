// `arl replay` of agent envs (kind: agent): a real run of Python agent programs on builtin:tiny,
// then each recorded episode's program run again on its recorded model answers. A deterministic
// program replays identically, the one whose episodes a budget (harness.max_turns) stopped
// included; a program whose request carries an unseeded random number diverges at that call, and
// one whose outcome is unseeded diverges at that signal, each with both texts. A program edited
// since the run is named before the replay runs it as it is now.
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readBuffer } from "../../src/episode/buffer.js";
import { runArl } from "../helpers/cli.js";
import { embeddedTrainerFlag } from "../helpers/plans.js";

/**
 * Asks the model CALLS times, each request the conversation so far plus "again"; its own env is a
 * counter of the replies that name the task's word. MODE: "steady" (a function of the task and the
 * answers), "lucky" (its first request carries random.random()), "noisy" (its outcome does).
 */
const PROGRAM = `import json, os, random, sys, urllib.request
calls, mode = int(sys.argv[1]), sys.argv[2]
task = json.loads(sys.stdin.readline())["task"]
def ask(messages):
    body = json.dumps({"model": "policy", "messages": messages, "max_tokens": 4}).encode()
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body, headers={"content-type": "application/json", "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    return json.loads(urllib.request.urlopen(request).read())["choices"][0]["message"]["content"] or ""
first = "say " + task["word"] + (" lucky " + str(random.random()) if mode == "lucky" else "")
messages = [{"role": "user", "content": first}]
hits = 0
for _ in range(calls):
    reply = ask(messages)
    hits += task["word"] in reply
    messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": "again"}]
print(json.dumps({"signals": {"hits": random.randint(0, 10**9) if mode == "noisy" else hits}}))
`;

const WORDS = ["red", "blue", "green", "gold", "grey", "pink", "teal", "navy", "rose", "lime"];

function spec(name: string, envs: Record<string, string>): string {
  const blocks = Object.entries(envs).map(
    ([env, args]) => `  env ${env} extends agent.program {
    command: ["python3", "prog.py", ${args}]
    task_file: "./tasks.jsonl"
    signals { hits { scope: outcome, type: count } }
  }`,
  );
  const names = Object.keys(envs);
  return `import "std/envs/agent" as agent
experiment ${name} {
  seed: 3
  policy { model: "builtin:tiny?hidden=24&embed=16&heads=2&key=8", sampling { max_new_tokens: 4 } }
${blocks.join("\n")}
  harness { max_turns: 3, max_response_tokens: 8 }
  reward { success: ${names.map((n) => `${n}.hits`).join(" + ")} }
  algorithm { group_size: 2, advantage { baseline: leave_one_out } }
  rollout { tasks_per_batch: 4, iterations: 1 }
  eval { every: 1, tasks: 1, before_training: false, success: ${names.map((n) => `${n}.hits`).join(" + ")} > 0 }
}
`;
}

/** Runs `text` in a fresh folder with the program and its tasks; returns the folder and the run directory. */
async function trained(name: string, text: string): Promise<{ cwd: string; runDir: string }> {
  const cwd = mkdtempSync(path.join(tmpdir(), "arl-replay-agent-"));
  writeFileSync(path.join(cwd, "prog.py"), PROGRAM);
  writeFileSync(path.join(cwd, "tasks.jsonl"), WORDS.map((word) => `${JSON.stringify({ word })}\n`).join(""));
  writeFileSync(path.join(cwd, "spec.arl"), text);
  const run = await runArl(["run", "spec.arl", "--out", "runs", ...embeddedTrainerFlag], { cwd });
  expect(run.code, run.stderr).toBe(0);
  const variants = path.join(cwd, "runs", name, "default");
  return { cwd, runDir: path.join("runs", name, "default", readdirSync(variants)[0]!) };
}

describe("arl replay of agent programs", () => {
  it("replays a deterministic program identically, a budget-stopped one included, and exits 0", async () => {
    const { cwd, runDir } = await trained("steady", spec("steady", { two: '"2", "steady"', five: '"5", "steady"' }));
    const { records } = readBuffer(path.join(cwd, runDir, "buffer.arlbuf"));
    const firsts = records.filter((r) => r.program !== undefined);
    expect(firsts.length).toBeGreaterThan(0);
    // The five-call program meets max_turns 3: its fourth call is refused and it is stopped there.
    const stopped = firsts.filter((r) => r.env === "five");
    expect(stopped.length).toBeGreaterThan(0);
    for (const r of stopped)
      expect(r.program!.calls.some((c) => c.ends === true && c.refused?.code === "max_turns")).toBe(true);
    const r = await runArl(["replay", runDir], { cwd });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const identical = r.stdout.match(
      /: identical \(its program run again, \d+ model calls answered from the record, rewards [\d.]+\)$/gm,
    );
    expect(identical).toHaveLength(firsts.length);
    expect(r.stdout).toMatch(/env two, task \d+, seed \d+: identical \(its program run again, 2 model calls/);
    expect(r.stdout).toMatch(/env five, task \d+, seed \d+: identical \(its program run again, 3 model calls/);
    expect(r.stdout).toContain(
      `replayed ${firsts.length} episodes of steady/default: ${firsts.length} identical, 0 diverged\n`,
    );
    // The program edited since the run (a comment): replay says so first, and runs it as it is now.
    writeFileSync(path.join(cwd, "prog.py"), `# edited\n${PROGRAM}`);
    const edited = await runArl(["replay", runDir, "--episode", "0"], { cwd });
    expect(edited.stderr).toMatch(
      /^arl replay: note: env '(two|five)' \(agent\): the code file 'prog\.py' has sha256 [0-9a-f]{64}, but the run's plan was lowered with sha256 [0-9a-f]{64}: the replay runs the code as it is now$/m,
    );
    expect(edited.code, edited.stdout).toBe(0);
  }, 120_000);

  it("names a request the recorded episode never made, and an outcome that differs, with both texts (exit 1)", async () => {
    const lucky = await trained("lucky", spec("lucky", { one: '"1", "lucky"' }));
    const a = await runArl(["replay", lucky.runDir], { cwd: lucky.cwd });
    expect(a.code, a.stdout + a.stderr).toBe(1);
    expect(a.stdout).toMatch(
      /: DIVERGED at the program's requests: the program's model call 1 differs\n {4}recorded: call 1: 1 messages, the last \(user\): "say \w+ lucky 0\.\d+"\n {4}replayed: 1 messages, the last \(user\): "say \w+ lucky 0\.\d+"\n/,
    );
    expect(a.stdout).toMatch(/0 identical, \d+ diverged\n$/);

    const noisy = await trained("noisy", spec("noisy", { one: '"1", "noisy"' }));
    const b = await runArl(["replay", noisy.runDir], { cwd: noisy.cwd });
    expect(b.code, b.stdout + b.stderr).toBe(1);
    expect(b.stdout).toMatch(
      /: DIVERGED at the program's end: the outcome signal 'hits' differs\n {4}recorded: \d+\n {4}replayed: \d+\n/,
    );
  }, 120_000);
});
