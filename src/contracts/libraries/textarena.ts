// TextArena (docs/env-libraries.md, "TextArena"): its single-player games by env id; the episode's
// seed makes the game (the tasks are seeds).
import * as z from "zod";
import { doc } from "../schema-primitives.js";
import { didYouMean } from "../suggest.js";
import { textarenaCatalog } from "./catalog/textarena.js";
import { hostLibrary } from "./library.js";

const { env_ids: envIds } = textarenaCatalog;

/** An id's game: its name before the first dash. */
const gameOf = (id: string) => id.replace(/-.*$/, "");

export const textarenaLibrary = hostLibrary({
  kind: "textarena",
  knobs: {
    env_id: doc(
      z
        .string()
        .regex(
          /^[A-Za-z0-9]+-v\d+(-[A-Za-z0-9-]+)?$/,
          "a TextArena env id looks like Sudoku-v0 or Minesweeper-v0-small",
        ),
      "A single-player TextArena env id (Sudoku-v0, Minesweeper-v0-small, GuessTheNumber-v0-raw); an unknown id is refused at check time; a game for several players, or one that cannot run offline, at provision.",
    ),
  },
  check(config) {
    const id = config.env_id;
    if (typeof id !== "string" || envIds.includes(id)) return [];
    const game = envIds.filter((e) => gameOf(e).toLowerCase() === gameOf(id).toLowerCase());
    const hint =
      didYouMean(id, envIds) ??
      (game.length > 0
        ? `its ids for ${gameOf(id)}: ${game.slice(0, 6).join(", ")}`
        : "see TextArena's env ids in docs/env-libraries.md");
    return [{ knob: "env_id", message: `TextArena ${textarenaCatalog.version} has no env '${id}'`, hint }];
  },
});
