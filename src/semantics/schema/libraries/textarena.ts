// TextArena (docs/env-libraries.md, "TextArena"): its single-player games by env id; the episode's
// seed makes the game (the tasks are seeds).
import * as z from "zod";
import { doc } from "../common.js";
import { hostLibrary } from "./library.js";

export const textarenaLibrary = hostLibrary({
  kind: "textarena",
  knobs: {
    env_id: doc(
      z.string().regex(/^[A-Za-z0-9]+-v\d+(-[A-Za-z0-9-]+)?$/, "a TextArena env id looks like Sudoku-v0 or Minesweeper-v0-small"),
      "A single-player TextArena env id (Sudoku-v0, Minesweeper-v0-small, GuessTheNumber-v0-raw); a game for several players, or one that cannot run offline, is refused at provision.",
    ),
  },
});
