// The seeded streams of the run loop, one per decision, each a pure function of the plan's seed
// and where the decision is made (seeds.ts): a resumed run makes the same choices as one that
// never stopped. The names are part of every recorded run: renaming one changes what a seed
// means, so an old run directory would no longer resume to the same result.
import type { Random } from "../../contracts/random.js";
import { deriveSeed, derivedRandom } from "../../contracts/random.js";
import type { Split } from "../../plan/splits.js";

export class RunStreams {
  constructor(readonly seed: number) {}

  /** The seed of one episode: its env's first state, and (through turnSeed) its sampling. */
  episodeSeed(split: Split, iteration: number, env: string, task: number, group: number, sample: number): number {
    return deriveSeed(this.seed, split, iteration, env, task, group, sample);
  }

  /** The sampling seed of turn `turn` of the episode seeded `episodeSeed`. */
  turnSeed(episodeSeed: number, turn: number): number {
    return deriveSeed(episodeSeed, "turn", turn);
  }

  /** The env and task of each group of an iteration's training batch. */
  tasks(iteration: number): Random {
    return derivedRandom(this.seed, "tasks", iteration);
  }

  /** The order in which an update epoch cuts the batch into minibatches. */
  minibatches(iteration: number, epoch: number): Random {
    return derivedRandom(this.seed, "minibatches", iteration, epoch);
  }

  /** Which held-out tasks of `env` an evaluation plays when eval.tasks samples them (the same at every evaluation). */
  evalTasks(env: string): Random {
    return derivedRandom(this.seed, "eval-tasks", env);
  }

  /** The order in which the cold start looks for walkthroughs among the training tasks. */
  sftDemos(): Random {
    return derivedRandom(this.seed, "sft");
  }

  /** The env seed of the cold start's walkthrough of `task` in `env`. */
  sftEpisodeSeed(env: string, task: number): number {
    return deriveSeed(this.seed, "sft", env, task);
  }

  /** The order of the demos in a minibatched cold-start epoch. */
  sftEpoch(epoch: number): Random {
    return derivedRandom(this.seed, "sft-epoch", epoch);
  }

  /** Which of the cold start's records (rollout.sft.data) are held out for the held-out loss. */
  sftHeldout(): Random {
    return derivedRandom(this.seed, "sft-heldout");
  }

  /** The bootstrap resampling of an evaluation's pass@k interval (report/stats.ts recomputes it from the same seed). */
  bootstrapSeed(iteration: number, k: number): number {
    return deriveSeed(this.seed, "bootstrap", iteration, k);
  }
}
