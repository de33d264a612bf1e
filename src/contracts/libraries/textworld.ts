// TextWorld (docs/env-host.md, "TextWorld"): games made by TextWorld's own generator from the
// knobs and a seed a task, or a folder of the user's own game files.
import * as z from "zod";
import { doc, nonNegativeInt, positiveInt } from "../schema-primitives.js";
import { hostLibrary } from "./library.js";

export const textworldLibrary = hostLibrary({
  kind: "textworld",
  knobs: {
    world_size: doc(positiveInt.default(2), "Rooms in the world (TextWorld's nb_rooms; the w of wW-oO-qQ)."),
    objects: doc(nonNegativeInt.default(3), "Objects in the world (TextWorld's nb_objects; the o)."),
    quest_length: doc(positiveInt.default(4), "Commands in the quest's winning walkthrough (the q)."),
    quest_breadth: doc(positiveInt.default(1), "Branches of the quest (TextWorld's quest_breadth)."),
    seeds: doc(
      z.array(nonNegativeInt).min(1).nullable().default(null),
      "The generator's seed of each task, in task order; `tasks` is their count. none: seeds first_seed .. first_seed + tasks - 1.",
    ),
    first_seed: doc(nonNegativeInt.default(0), "The first seed of the range used when `seeds` is none."),
    games: doc(
      z.string().min(1).nullable().default(null),
      "A folder of your own TextWorld games (.z8 or .ulx, each with its .json), one task a game in name order; none: generate them.",
    ),
    admissible_commands: doc(
      z.boolean().default(false),
      "Show TextWorld's admissible commands after each observation.",
    ),
    challenge: doc(
      z.enum(["tw-simple", "tw-cooking", "tw-coin_collector", "tw-treasure_hunter"]).nullable().default(null),
      "A TextWorld challenge whose own generator makes the games (one seed a task), instead of the size knobs, which it ignores; none: generate wW-oO-qQ games.",
    ),
    challenge_settings: doc(
      z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}),
      "The challenge's settings, as its generator takes them (tw-simple: rewards dense | balanced | sparse, goal detailed | brief | none, test).",
    ),
  },
  folders: { games: { extensions: [".z8", ".ulx", ".json"], taskExtensions: [".z8", ".ulx"] } },
  walkthroughs: true,
  check(config) {
    const seeds = config.seeds;
    if (Array.isArray(seeds) && new Set(seeds).size !== seeds.length) {
      return [
        {
          knob: "seeds",
          message: "the seed list repeats a seed, so two tasks would be the same game",
          hint: "list each seed once",
        },
      ];
    }
    return [];
  },
  taskCount: (config) => (Array.isArray(config.seeds) ? config.seeds.length : undefined),
  seededTasks: true,
});
