// Gymnasium (docs/env-libraries.md, "Gymnasium"): any env whose actions and observations are text
// (spaces.Text), by registered id or entry point; the episode's seed is its reset seed.
import * as z from "zod";
import { doc, positiveInt } from "../schema-primitives.js";
import { hostLibrary, libraryObject } from "./library.js";

export const gymnasiumLibrary = hostLibrary({
  kind: "gymnasium",
  knobs: {
    id: doc(
      z.string().min(1).nullable().default(null),
      'A registered env id, or Gymnasium\'s "module:EnvId" (imports the module that registers it); or write entry_point.',
    ),
    entry_point: doc(
      z
        .string()
        .regex(/^[\w.]+:\w+$/, 'an entry point is "module:Class"')
        .nullable()
        .default(null),
      "The env's class as \"module:Class\" (importable from the env host's Python), instead of id.",
    ),
    kwargs: doc(libraryObject.default({}), "The env's constructor arguments."),
    max_episode_steps: doc(
      positiveInt.nullable().default(null),
      "Gymnasium's time limit (the episode is truncated after this many steps); none: the env's own.",
    ),
  },
  check(config) {
    if ((config.id === null) === (config.entry_point === null))
      return [
        {
          knob: "id",
          message: "write exactly one of id and entry_point",
          hint: 'id: "MyEnv-v0", or entry_point: "my_envs.guess:GuessEnv"',
        },
      ];
    return [];
  },
});
