// Runs the CLI in-process with captured streams.
import { runCli } from "../../src/cli/main.js";
import type { CliIO } from "../../src/cli/io.js";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runArl(
  args: string[],
  options: { cwd: string; env?: Record<string, string>; isTTY?: boolean },
): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const io: CliIO = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    cwd: options.cwd,
    env: options.env ?? {},
    isTTY: options.isTTY ?? false,
  };
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}
