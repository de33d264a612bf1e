// Progress of a run: a live status line on a terminal, plain log lines otherwise.
import type { ProgressStatus } from "./run/context.js";

export interface ProgressOutput {
  readonly write: (text: string) => void;
  readonly isTTY: boolean;
}

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  const s = Math.round(seconds);
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m` : s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

function statusLine(p: ProgressStatus): string {
  const width = 20;
  const done = Math.round((p.iteration / p.iterations) * width);
  const bar = `${"#".repeat(done)}${"-".repeat(width - done)}`;
  const eta = (p.iterations - p.iteration) * p.secondsPerIteration;
  return `[${bar}] ${p.iteration}/${p.iterations}  success ${p.success.toFixed(3)}  reward ${p.reward.toFixed(3)}  ${Math.round(p.tokensPerSecond)} tok/s  ETA ${duration(eta)}`;
}

/** Log lines interleave with the status line: the line is cleared, the log printed, the line redrawn. */
export class Progress {
  private current = "";
  constructor(private readonly out: ProgressOutput) {}

  update(p: ProgressStatus): void {
    this.current = statusLine(p);
    if (this.out.isTTY) this.out.write(`\r\x1b[2K${this.current}`);
  }

  log(line: string): void {
    if (this.out.isTTY) this.out.write(`\r\x1b[2K${line}\n${this.current}`);
    else this.out.write(`${line}\n`);
  }

  done(): void {
    if (this.out.isTTY && this.current) this.out.write("\n");
    this.current = "";
  }
}
