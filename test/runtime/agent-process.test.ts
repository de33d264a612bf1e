// The agent program runner (src/runtime/run/agent-process.ts) with tiny node programs: what it
// gives the program (stdin, environment, folder), what it keeps (the last stdout line, the
// stderr tail), a crash, a time-out of a program that ignores SIGTERM, and a child the program
// leaves behind, killed with its process group; children that left the group (setsid, a
// double-forked daemon) found by the mark in their environment and killed at the episode's end.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { KILL_GRACE_MS, runAgentProcess } from "../../src/runtime/run/agent-process.js";
import { killIfRunning, running } from "../helpers/processes.js";

const node = (script: string) => [process.execPath, "-e", script];
const base = { cwd: tmpdir(), env: {}, stdin: "", timeoutS: 20, maxStderrBytes: 1024 };

/** Starts five sleepers in sessions of their own and a classic daemon, writes their pids to argv[1], reports and exits. */
const DETACHING_AGENT = `
import os, subprocess, sys, time
sleeper = [sys.executable, "-c", "import time\\nwhile True: time.sleep(1)"]
pids = [subprocess.Popen(sleeper, start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid for _ in range(5)]
read_end, write_end = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.write(write_end, str(os.getpid()).encode())
        os.close(write_end)
        while True:
            time.sleep(1)
    os._exit(0)
os.close(write_end)
pids.append(int(os.read(read_end, 32)))
with open(sys.argv[1], "w") as f:
    f.write(" ".join(map(str, pids)))
print('{"signals": {"ok": true}}')
`;

describe("agent programs: one process group per episode", () => {
  it("gets its task on stdin and in its environment, runs in its folder; the last stdout line and the stderr tail are kept", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "arl-agent-proc-"));
    const script = `
      let input = "";
      process.stdin.on("data", (c) => (input += c)).on("end", () => {
        process.stderr.write("x".repeat(5000) + "END-OF-STDERR");
        console.log("progress line");
        console.log(JSON.stringify({ stdin: JSON.parse(input), task: process.env.ARL_TASK, cwd: process.cwd() }));
        console.log("   ");
      });`;
    const run = await runAgentProcess({
      ...base,
      command: node(script),
      cwd,
      env: { ARL_TASK: '{"q":1}' },
      stdin: '{"task": {"q": 1}, "task_id": 3, "seed": 7}\n',
    });
    expect(run).toMatchObject({ code: 0, signal: null, timedOut: false, stopped: false });
    expect(JSON.parse(run.lastLine)).toEqual({ stdin: { task: { q: 1 }, task_id: 3, seed: 7 }, task: '{"q":1}', cwd });
    expect(Buffer.byteLength(run.stderrTail)).toBe(1024);
    expect(run.stderrTail.endsWith("END-OF-STDERR")).toBe(true);
  });

  it("a crash keeps its exit code and stderr; a missing program is a spawn error, not a throw", async () => {
    const crash = await runAgentProcess({
      ...base,
      command: node('console.error("Traceback: boom"); process.exit(3)'),
    });
    expect(crash).toMatchObject({ code: 3, timedOut: false, lastLine: "" });
    expect(crash.stderrTail).toContain("Traceback: boom");
    const missing = await runAgentProcess({ ...base, command: ["./no-such-agent-program"] });
    expect(missing.spawnError).toMatch(/ENOENT/);
  });

  it("past its time limit the group gets SIGTERM, then SIGKILL when it ignores it; a child left behind dies with the group", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-agent-stray-"));
    const pidFile = path.join(dir, "child.pid");
    // The program starts a child in its own group that would outlive it, then ignores SIGTERM.
    const script = `
      const { spawn } = require("node:child_process");
      const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
      require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(child.pid));
      process.on("SIGTERM", () => console.error("ignoring SIGTERM"));
      setInterval(() => {}, 1000);`;
    const begun = Date.now();
    const run = await runAgentProcess({ ...base, command: node(script), timeoutS: 0.5 });
    const took = Date.now() - begun;
    expect(run).toMatchObject({ timedOut: true, code: null, signal: "SIGKILL" });
    expect(run.stderrTail).toContain("ignoring SIGTERM");
    expect(took).toBeGreaterThanOrEqual(500 + KILL_GRACE_MS - 50);
    const child = Number(readFileSync(pidFile, "utf8"));
    await new Promise((r) => setTimeout(r, 100));
    expect(running(child)).toBe(false);
  });

  it("a program that exits leaving a child holding its stdout ends at once, and the child is killed", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-agent-stray-"));
    const pidFile = path.join(dir, "child.pid");
    const script = `
      const { spawn } = require("node:child_process");
      const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "inherit" });
      require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(child.pid));
      console.log('{"signals": {"ok": true}}');
      process.exit(0);`;
    const begun = Date.now();
    const run = await runAgentProcess({ ...base, command: node(script) });
    expect(Date.now() - begun).toBeLessThan(5000);
    expect(run).toMatchObject({ code: 0, timedOut: false, lastLine: '{"signals": {"ok": true}}' });
    await new Promise((r) => setTimeout(r, 100));
    expect(running(Number(readFileSync(pidFile, "utf8")))).toBe(false);
  });

  it("children that left the group (start_new_session, a double-forked daemon re-parented to init) die at the episode's end", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-agent-setsid-"));
    const pidFile = path.join(dir, "children.pids");
    writeFileSync(path.join(dir, "agent.py"), DETACHING_AGENT);
    let pids: number[] = [];
    try {
      const run = await runAgentProcess({ ...base, cwd: dir, command: ["python3", "agent.py", pidFile] });
      expect(run, run.stderrTail).toMatchObject({ code: 0, lastLine: '{"signals": {"ok": true}}' });
      pids = readFileSync(pidFile, "utf8").trim().split(" ").map(Number);
      expect(pids).toHaveLength(6);
      await new Promise((r) => setTimeout(r, 100));
      expect(pids.filter(running)).toEqual([]);
    } finally {
      pids.forEach(killIfRunning);
    }
  });

  it("an abort stops it as a time-out does", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const run = await runAgentProcess({
      ...base,
      command: node("setInterval(() => {}, 1000)"),
      signal: controller.signal,
    });
    expect(run).toMatchObject({ stopped: true, timedOut: false, signal: "SIGTERM" });
  });
});
