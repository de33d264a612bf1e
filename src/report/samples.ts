// A few trajectories for the report page: the best, the median and the worst episode by reward
// of the last iteration in the run's token buffer, each as `arl show` prints it, so that a
// reader sees what the numbers were made of. A run without a readable buffer has none.
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { readBuffer } from "../episode/buffer.js";
import { selectTrajectories, type ShownTrajectory } from "./trajectories.js";
import { trajectoryText } from "./trajectory-text.js";

export interface SampleTrajectory {
  readonly which: "best" | "median" | "worst";
  readonly iteration: number;
  readonly episode: number;
  readonly task: number;
  readonly reward: number;
  readonly end: string;
  readonly turns: number;
  /** The episode as `arl show` prints it (its last record, for a step-wise episode), uncoloured. */
  readonly text: string;
}

/** Above this size the buffer is not read for the report (it is read whole; `arl show` still reads it). */
const MAX_BUFFER_BYTES = 256 * 1024 * 1024;

/**
 * The best, median and worst episode of the last iteration (fewer when it has fewer episodes),
 * and a note when the buffer was too large to read for them.
 */
export function sampleTrajectories(runDir: string): { samples: SampleTrajectory[]; note?: string } {
  const file = path.join(runDir, "buffer.arlbuf");
  if (!existsSync(file)) return { samples: [] };
  const size = statSync(file).size;
  if (size > MAX_BUFFER_BYTES)
    return {
      samples: [],
      note: `the token buffer is ${Math.round(size / 2 ** 20)} MiB, more than the report reads for sample trajectories; 'arl show RUN_DIR' prints them`,
    };
  let records;
  try {
    records = readBuffer(file).records;
  } catch {
    // A damaged buffer is `arl show`'s to explain; the report just has no samples.
    return { samples: [] };
  }
  if (records.length === 0) return { samples: [] };
  const { trajectories } = selectTrajectories(records, { limit: 0 });
  // One trajectory per episode: a step-wise episode's last record holds its whole context.
  const byEpisode = new Map<number, ShownTrajectory>();
  for (const t of trajectories) byEpisode.set(t.episode, t);
  // Ascending reward, ties in episode order: the same buffer always gives the same samples.
  const sorted = [...byEpisode.values()].sort((a, b) => a.record.reward - b.record.reward || a.episode - b.episode);
  const picks: [SampleTrajectory["which"], ShownTrajectory | undefined][] = [
    ["best", sorted[sorted.length - 1]],
    ["median", sorted[Math.floor((sorted.length - 1) / 2)]],
    ["worst", sorted[0]],
  ];
  const seen = new Set<number>();
  const out: SampleTrajectory[] = [];
  for (const [which, t] of picks) {
    if (!t || seen.has(t.episode)) continue;
    seen.add(t.episode);
    const r = t.record;
    out.push({
      which,
      iteration: r.iteration,
      episode: t.episode,
      task: r.task,
      reward: r.reward,
      end: r.end,
      turns: r.turns,
      text: trajectoryText(t, { color: false, tokens: false }),
    });
  }
  return { samples: out };
}
