// Marks in a child's environment (src/contracts/process-mark.ts): a sweep kills the processes
// carrying its mark, through setsid and re-parenting, and no other mark's; the exit hook of a
// runtime that ends while its children run kills every process carrying any of its marks.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { killMarked, newProcessMark, type ProcessMark } from "../../src/contracts/process-mark.js";
import { killIfRunning, running } from "../helpers/processes.js";

/** A sleeper in a session of its own, re-parented to init once its short-lived parent exits. */
function orphanedSleeper(mark: ProcessMark): Promise<number> {
  const script = `const c = require("node:child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { detached: true, stdio: "ignore" }); console.log(c.pid); process.exit(0);`;
  return new Promise((resolve, reject) => {
    const parent = spawn(process.execPath, ["-e", script], {
      env: { ...process.env, ...mark.env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    parent.stdout.on("data", (c: Buffer) => (out += c.toString()));
    parent.on("error", reject);
    parent.on("close", () => resolve(Number(out.trim())));
  });
}

const waitFor = async (file: string) => {
  for (let i = 0; i < 200 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 50));
};

describe("process marks", () => {
  it("a sweep kills the orphans carrying its mark and leaves another mark's alone", async () => {
    const mine = newProcessMark();
    const other = newProcessMark();
    const pids = await Promise.all([orphanedSleeper(mine), orphanedSleeper(mine), orphanedSleeper(other)]);
    try {
      expect(pids.filter(running)).toHaveLength(3);
      expect(await killMarked(mine)).toBe(2);
      await new Promise((r) => setTimeout(r, 100));
      expect(pids.map(running)).toEqual([false, false, true]);
    } finally {
      pids.forEach(killIfRunning);
    }
  });

  it("a runtime that exits while its agent program runs leaves none of the program's setsid children", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-mark-exit-"));
    const pidFile = path.join(dir, "children.pids");
    const agentProcess = fileURLToPath(new URL("../../dist/runtime/run/agent-process.js", import.meta.url));
    const program = `const { spawn } = require("node:child_process"); const kids = [0, 1, 2].map(() => spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { detached: true, stdio: "ignore" })); const fs = require("node:fs"); fs.writeFileSync(${JSON.stringify(`${pidFile}.part`)}, kids.map((k) => k.pid).join(" ")); fs.renameSync(${JSON.stringify(`${pidFile}.part`)}, ${JSON.stringify(pidFile)}); setInterval(() => {}, 1000);`;
    // The runtime: starts the program as an episode does, and exits (as `arl run` does at its end) while it runs.
    const runtime = `
      const { runAgentProcess } = await import(${JSON.stringify(agentProcess)});
      void runAgentProcess({ command: [process.execPath, "-e", ${JSON.stringify(program)}], cwd: ${JSON.stringify(dir)}, env: {}, stdin: "", timeoutS: 60, maxStderrBytes: 1024 });
      const fs = await import("node:fs");
      const wait = () => (fs.existsSync(${JSON.stringify(pidFile)}) ? process.exit(0) : setTimeout(wait, 50));
      wait();`;
    const exited = await new Promise<number | null>((resolve) =>
      spawn(process.execPath, ["--input-type=module", "-e", runtime], { stdio: "inherit" }).on("close", resolve),
    );
    expect(exited).toBe(0);
    await waitFor(pidFile);
    const pids = readFileSync(pidFile, "utf8").split(" ").map(Number);
    try {
      expect(pids).toHaveLength(3);
      await new Promise((r) => setTimeout(r, 100));
      expect(pids.filter(running)).toEqual([]);
    } finally {
      pids.forEach(killIfRunning);
    }
  });
});
