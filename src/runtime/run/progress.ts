// Progress of a run: a live status line on a terminal, plain log lines otherwise.
import type { ProgressStatus } from "./context.js";

export interface ProgressOutput {
  readonly write: (text: string) => void;
  readonly isTTY: boolean;
}

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  const s = Math.round(seconds);
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`
      : `${s}s`;
}

function statusLine(p: ProgressStatus): string {
  const width = 20;
  const done = Math.round((p.iteration / p.iterations) * width);
  const bar = `${"#".repeat(done)}${"-".repeat(width - done)}`;
  const eta = (p.iterations - p.iteration) * p.secondsPerIteration;
  return `[${bar}] ${p.iteration}/${p.iterations}  success ${p.success.toFixed(3)}  reward ${p.reward.toFixed(3)}  ${Math.round(p.tokensPerSecond)} tok/s  ETA ${duration(eta)}`;
}

/** Counts of a long phase's work, planned and done; end() stops its progress lines. */
export interface PhaseWatch {
  readonly planned: (units: number) => void;
  readonly done: () => void;
  readonly end: () => void;
}

/** Past this long without a unit done, the progress line says so: a hung env or agent shows as a stall, not as silence. */
const STALL_MS = 30_000;

/**
 * Progress of a long phase (a rollout, an evaluation, the cold start) as log lines: the first
 * after 2 s, then at doubling intervals up to a minute apart, whether or not work finished in
 * between (a live status line cannot say how far an iteration is, and a phase waiting on a hung
 * process must not go quiet). `label` starts the line, `unit` names what is counted: "sft: 12 of
 * 40 steps taken (31 s)".
 */
export function phaseWatch(log: (line: string) => void, label: string, unit: string): PhaseWatch {
  const begun = Date.now();
  let total = 0;
  let done = 0;
  let lastDone = begun;
  let timer: NodeJS.Timeout | undefined;
  const schedule = (delay: number) => {
    timer = setTimeout(() => {
      const now = Date.now();
      const elapsed = now - begun;
      const stalled =
        now - lastDone >= STALL_MS ? `; nothing finished in the last ${Math.round((now - lastDone) / 1000)} s` : "";
      log(`${label} ${done} of ${total} ${unit} (${Math.round(elapsed / 1000)} s${stalled})`);
      schedule(Math.min(elapsed, 60_000));
    }, delay);
    // Progress lines never keep the process alive.
    timer.unref();
  };
  schedule(2000);
  return {
    planned: (units) => {
      total += units;
    },
    done: () => {
      done++;
      lastDone = Date.now();
    },
    end: () => clearTimeout(timer),
  };
}

/** Log lines interleave with the status line: the line is cleared, the log printed, the line redrawn. */
export class Progress {
  private current = "";
  /** `prefix` starts every log line: the variant's name when several runs share one output. */
  constructor(
    private readonly out: ProgressOutput,
    private readonly prefix = "",
  ) {}

  update(p: ProgressStatus): void {
    this.current = statusLine(p);
    if (this.out.isTTY) this.out.write(`\r\x1b[2K${this.current}`);
  }

  log(line: string): void {
    if (this.out.isTTY) this.out.write(`\r\x1b[2K${this.prefix}${line}\n${this.current}`);
    else this.out.write(`${this.prefix}${line}\n`);
  }

  done(): void {
    if (this.out.isTTY && this.current) this.out.write("\n");
    this.current = "";
  }
}
