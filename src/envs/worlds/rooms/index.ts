// The built-in `rooms` env: procedurally generated text adventures with TextWorld's complexity
// knobs (rooms, objects, quest_length). See world.ts for the world model and the naming rule,
// generate.ts for how a task id becomes a world and a quest, solver.ts for the optimal solver,
// rules.ts for the actions and their text.
//
// Signals: state `progress` = (optimal - remaining) / optimal, where remaining is the solver's
// optimal number of steps from the current state: the fraction of an optimal walkthrough already
// achieved, 0 at the start, exactly 1 when the goal holds, clamped to [0, 1] (a detour can push
// the remaining distance above the start's). It is a function of the state, so it is a sound
// potential for shaping. State `invalid_actions` counts refused actions; outcome `success`.
import type { EnvInstance, EnvKind, Observation, Signals, StepResult } from "../../../contracts/env.js";
import type { ToolCall } from "../../../contracts/tool-calls.js";
import type { PlanEnv } from "../../../plan/schema.js";
import { generateWorld, type RoomsParams } from "./generate.js";
import { act, describeGoal, describeRoom } from "./rules.js";
import { distance, solve } from "./solver.js";
import { roomsVocabulary } from "./vocabulary.js";
import { goalHolds, type State, type World } from "./world.js";

export type RoomsEnv = Extract<PlanEnv, { kind: "rooms" }>;

function roomsParams(env: Pick<RoomsEnv, "rooms" | "objects" | "quest_length" | "version">): RoomsParams {
  return { rooms: env.rooms, objects: env.objects, quest_length: env.quest_length, version: env.version };
}

export class RoomsGame implements EnvInstance {
  private state: State;
  private invalid = 0;
  private finished = false;
  /** Remaining optimal distance by state, for `progress`. */
  private readonly memo = new Map<string, number>();

  constructor(readonly world: World) {
    this.state = world.start.slice();
  }

  /** The text shown at the start: the task, then the starting room. */
  intro(): string {
    return `${describeGoal(this.world)}\n\n${describeRoom(this.world, this.state)}`;
  }

  progress(): number {
    if (goalHolds(this.world, this.state)) return 1;
    const remaining = distance(this.world, this.state, this.memo);
    if (remaining === undefined || this.world.optimal === 0) return 0;
    return Math.min(1, Math.max(0, (this.world.optimal - remaining) / this.world.optimal));
  }

  signals(): Signals {
    return { progress: this.progress(), invalid_actions: this.invalid };
  }

  async reset(): Promise<Observation> {
    this.state = this.world.start.slice();
    this.invalid = 0;
    this.finished = false;
    return { text: this.intro(), signals: this.signals() };
  }

  /** Synchronous step (the async `step` wraps it). */
  stepSync(call: ToolCall): StepResult {
    if (this.finished) return { text: "Your task is done.", signals: this.signals(), terminated: true };
    const r = act(this.world, this.state, call ?? { name: "", arguments: {} });
    this.state = r.state;
    if (r.invalid) this.invalid++;
    this.finished = goalHolds(this.world, this.state);
    return {
      text: this.finished ? `${r.text} Your task is done.` : r.text,
      signals: this.signals(),
      terminated: this.finished,
    };
  }

  async step(call: ToolCall): Promise<StepResult> {
    return this.stepSync(call);
  }

  async outcome(): Promise<Signals> {
    return { success: this.finished };
  }

  async close(): Promise<void> {}
}

export const roomsEnv: EnvKind<RoomsEnv> = {
  kind: "rooms",
  async create(env, task) {
    // The world depends only on the task and the env's parameters, never on the episode's seed.
    return new RoomsGame(generateWorld(roomsParams(env), task));
  },
  vocabulary() {
    return roomsVocabulary();
  },
  async walkthrough(env, task) {
    const world = generateWorld(roomsParams(env), task);
    return solve(world, world.start)?.calls;
  },
};
