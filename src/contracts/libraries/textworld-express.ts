// TextWorldExpress (docs/env-libraries.md, "TextWorldExpress"): its eight procedural games in a JVM;
// task i is the fold's i-th seed, its gold path the walkthrough.
import * as z from "zod";
import { doc, enumOf, positiveInt } from "../schema-primitives.js";
import { hostLibrary } from "./library.js";

/** TextWorldExpress's games (textworld_express.constants.GAME_NAMES). */
const textworldExpressGames = [
  "twc",
  "cookingworld",
  "coin",
  "mapreader",
  "arithmetic",
  "sorting",
  "simonsays",
  "peckingorder",
] as const;

export const textworldExpressLibrary = hostLibrary({
  kind: "textworld_express",
  knobs: {
    game: doc(
      enumOf(textworldExpressGames),
      "The game: twc, cookingworld, coin, mapreader, arithmetic, sorting, simonsays or peckingorder.",
    ),
    game_params: doc(
      z.record(z.string(), z.number().int()).default({}),
      "The game's integer parameters (coin: numLocations, numDistractorItems, includeDoors, limitInventorySize); one the game rejects is refused at provision.",
    ),
    fold: doc(
      enumOf(["train", "dev", "test"]).default("train"),
      "Whose seeds the tasks are (the folds' seeds are disjoint).",
    ),
    step_limit: doc(positiveInt.default(100), "The library's envStepLimit: moves before the game ends."),
    show_valid_actions: doc(z.boolean().default(false), "Append the valid actions to each observation."),
  },
  walkthroughs: true,
});
