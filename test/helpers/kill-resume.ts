// `arl run` in a child process, killed with SIGKILL once `killAfter` iterations are committed,
// then `arl run --resume`: what the resume tests compare against an uninterrupted run. The
// trainer and env processes lead process groups of their own, outside the one killed; they exit
// when their stdin ends, as after a real kill -9 of the runtime.
import { execa } from "execa";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const arl = fileURLToPath(new URL("../../bin/arl.js", import.meta.url));

export interface KilledAndResumed {
  readonly runDir: string;
  /** Iterations committed when the kill landed. */
  readonly killedAt: number;
  readonly resumed: { readonly exitCode?: number; readonly stdout: string; readonly stderr: string };
}

/**
 * Runs `file` (experiment `experiment`, variant default) under `out`, kills it after `killAfter`
 * committed iterations, resumes it; with the plan's own trainer when `trainerCommand` is undefined.
 */
export async function killThenResume(
  file: string,
  out: string,
  experiment: string,
  trainerCommand: string | undefined,
  killAfter: number,
): Promise<KilledAndResumed> {
  const trainerArgs = trainerCommand === undefined ? [] : ["--trainer-command", trainerCommand];
  const child = execa(process.execPath, [arl, "run", file, "--out", out, ...trainerArgs], {
    reject: false,
    detached: true,
  });
  const stateFile = () => {
    const base = path.join(out, experiment, "default");
    if (!existsSync(base)) return undefined;
    const [run] = readdirSync(base);
    return run ? path.join(base, run, "state.json") : undefined;
  };
  // Polled until the kill point or the run's end (a loaded machine can take minutes), not for a fixed count.
  let ended = false;
  void child.finally(() => (ended = true));
  for (const deadline = Date.now() + 300_000; !ended && Date.now() < deadline;) {
    const s = stateFile();
    if (s && existsSync(s) && (JSON.parse(readFileSync(s, "utf8")) as { iteration: number }).iteration >= killAfter)
      break;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!ended) process.kill(-child.pid!, "SIGKILL");
  await child;
  const runDir = path.dirname(stateFile()!);
  const killedAt = (JSON.parse(readFileSync(path.join(runDir, "state.json"), "utf8")) as { iteration: number })
    .iteration;
  const resumed = await execa(process.execPath, [arl, "run", "--resume", runDir, ...trainerArgs], { reject: false });
  return { runDir, killedAt, resumed };
}
