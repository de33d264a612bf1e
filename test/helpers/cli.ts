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
    // The cache of cold starts stays off (vitest.config.ts) unless the test gives its folder.
    env: { ARL_COLD_START_CACHE: process.env.ARL_COLD_START_CACHE ?? "off", ...options.env },
    isTTY: options.isTTY ?? false,
  };
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}
