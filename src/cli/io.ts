// What a CLI command may touch: its streams, environment and working directory. Tests pass
// their own; the binary passes the process's.

export interface CliIO {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether stdout is a terminal (colour, live progress). */
  readonly isTTY: boolean;
}

export function processIO(): CliIO {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    cwd: process.cwd(),
    env: process.env,
    isTTY: process.stdout.isTTY === true,
  };
}

/** Exit codes shared by every command. */
export const ExitCode = {
  ok: 0,
  errors: 1,
  usage: 2,
  /** `arl fmt --check`: some files are not formatted. */
  unformatted: 3,
  /** `arl run`: the watchdog stopped a run with no learning signal (rollout.watchdog.on_no_signal: stop). */
  noSignal: 4,
} as const;

export class UsageError extends Error {}
