// Replaying a run's recorded episodes (`arl replay`): the episodes of the token buffer, selected
// as `arl show` selects them, each replayed in its env (episode.ts) after the env kinds that need
// it were checked and provisioned as a run provisions them, into a scratch folder, never the run
// directory. Episodes are replayed up to the plan's rollout.concurrency at once and reported in
// buffer order.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { EnvError, type EnvKind } from "../contracts/env.js";
import type { TrajectoryRecord } from "../episode/buffer.js";
import { startGateway } from "../inference/gateway/server.js";
import type { Gateway } from "../inference/gateway/contract.js";
import type { Plan } from "../plan/schema.js";
import { selectTrajectories, type Selection } from "../report/trajectories.js";
import { mapConcurrently } from "../runtime/run/episodes.js";
import { replayAgentEpisode } from "./agent.js";
import { replayEpisode, type EpisodeReplay } from "./episode.js";

export interface ReplayedEpisode {
  readonly iteration: number;
  /** The episode's number within its iteration (as `arl show` numbers it). */
  readonly episode: number;
  readonly record: TrajectoryRecord;
  readonly result: EpisodeReplay;
}

export interface ReplaySelection {
  /** One iteration; undefined: every iteration in the buffer (the last one when `episode` is given). */
  readonly iteration?: number;
  readonly episode?: Selection["episode"];
}

/** The first record of each selected episode, by iteration, in buffer order. SelectionError when the buffer holds none that match. */
function selectEpisodes(
  records: readonly TrajectoryRecord[],
  selection: ReplaySelection,
): { iteration: number; episode: number; record: TrajectoryRecord }[] {
  const iterations = [...new Set(records.map((r) => r.iteration))].sort((a, b) => a - b);
  const chosen =
    selection.iteration !== undefined || selection.episode !== undefined ? [selection.iteration] : iterations;
  return chosen.flatMap((iteration) => {
    const selected = selectTrajectories(records, {
      ...(iteration !== undefined ? { iteration } : {}),
      ...(selection.episode !== undefined ? { episode: selection.episode } : {}),
      limit: 0,
    });
    const seen = new Set<number>();
    return selected.trajectories.flatMap((t) => {
      if (seen.has(t.episode)) return [];
      seen.add(t.episode);
      return [{ iteration: selected.iteration, episode: t.episode, record: t.record }];
    });
  });
}

/** Why each env could not be made ready here (a host check's refusal, a failed provision), by env name. */
async function prepareEnvs(
  plan: Plan,
  kinds: ReadonlyMap<string, EnvKind>,
  names: readonly string[],
  scratch: string,
  log: (line: string) => void,
): Promise<Map<string, string>> {
  const problems = new Map<string, string>();
  for (const name of names) {
    const env = plan.envs[name];
    const kind = env && kinds.get(env.kind);
    if (!env || !kind) continue;
    try {
      const check = await kind.hostCheck?.(env);
      if (check?.refusal !== undefined) {
        problems.set(name, `env '${name}' (${env.kind}) cannot run here: ${check.refusal}`);
        continue;
      }
      const tools = plan.tools.filter((t) => t.env === name).map((t) => t.definition.function);
      // An agent's program is run again as it is; there is nothing of its kind to provision.
      if (env.kind !== "agent") await kind.provision?.(env, { name, tools, runDir: scratch, log });
    } catch (error) {
      if (!(error instanceof EnvError)) throw error;
      problems.set(name, `env '${name}' (${env.kind}) could not be provisioned: ${error.message}`);
    }
  }
  return problems;
}

/** Where the run being replayed lies: its directory (the sandbox hides it from agent programs) and its data root. */
export interface ReplayedRun {
  readonly runDir: string;
  readonly dataRoot: string | undefined;
}

/** Replays one episode: an agent env's by running its program again (agent.ts), any other in its env kind. */
function replayOne(
  plan: Plan,
  record: TrajectoryRecord,
  kinds: ReadonlyMap<string, EnvKind>,
  run: ReplayedRun,
  gateway: Gateway | undefined,
): Promise<EpisodeReplay> {
  const env = plan.envs[record.env];
  if (env?.kind === "agent")
    return replayAgentEpisode(plan, env, record, { gateway, dataRoot: run.dataRoot, runDir: run.runDir });
  return replayEpisode(plan, env && kinds.get(env.kind), record);
}

/**
 * Replays the selected episodes of `records` (a run of `plan`) in the env kinds `kinds`;
 * `onEpisode` hears of each in buffer order as soon as it and those before it are done.
 */
export async function replayRun(
  plan: Plan,
  records: readonly TrajectoryRecord[],
  selection: ReplaySelection,
  kinds: ReadonlyMap<string, EnvKind>,
  run: ReplayedRun,
  log: (line: string) => void,
  onEpisode: (e: ReplayedEpisode) => void = () => undefined,
): Promise<ReplayedEpisode[]> {
  const episodes = selectEpisodes(records, selection);
  const scratch = mkdtempSync(path.join(tmpdir(), "arl-replay-"));
  const recorded = (r: TrajectoryRecord) => r.transcript !== undefined || r.program !== undefined;
  const used = [...new Set(episodes.filter((e) => recorded(e.record)).map((e) => e.record.env))].sort();
  const agents = used.some((name) => plan.envs[name]?.kind === "agent");
  let gateway: Gateway | undefined;
  try {
    const problems = await prepareEnvs(plan, kinds, used, scratch, log);
    // Agent programs call the model through a gateway of their own, answered from the record.
    if (agents) gateway = await startGateway({ log });
    const done = new Map<number, ReplayedEpisode>();
    let next = 0;
    return await mapConcurrently(episodes, Math.max(1, plan.rollout.concurrency), async (e, i) => {
      const problem = problems.get(e.record.env);
      const result: EpisodeReplay =
        problem !== undefined && recorded(e.record)
          ? { status: "cannot", reason: problem }
          : await replayOne(plan, e.record, kinds, run, gateway);
      const replayed = { ...e, result };
      done.set(i, replayed);
      for (let d = done.get(next); d !== undefined; d = done.get(++next)) onEpisode(d);
      return replayed;
    });
  } finally {
    await gateway?.close();
    const started = new Set(used.flatMap((name) => kinds.get(plan.envs[name]?.kind ?? "") ?? []));
    await Promise.all(
      [...started].map((kind) => (kind.shutdown ? kind.shutdown().catch(() => undefined) : Promise.resolve())),
    );
    rmSync(scratch, { recursive: true, force: true });
  }
}
