// skyrl-gym (docs/env-libraries.md, "skyrl-gym"): SkyRL's text envs that run offline, one task a
// row of a JSON-lines file (hashed in the plan); text2sql's databases a folder (hashed too).
import * as z from "zod";
import { doc, enumOf } from "../schema-primitives.js";
import { hostLibrary, libraryObject } from "./library.js";

/** The skyrl-gym envs that need no server (search, searchcode and lcb do). */
const skyrlOfflineEnvs = ["gsm8k", "aime", "gsm8k_multi_turn", "text2sql"] as const;

export const skyrlGymLibrary = hostLibrary({
  kind: "skyrl_gym",
  knobs: {
    env_id: doc(
      enumOf(skyrlOfflineEnvs),
      "The skyrl-gym env: gsm8k and aime are single-step (the reply is scored), gsm8k_multi_turn and text2sql take several steps.",
    ),
    rows: doc(
      z.string().min(1),
      "Path of the rows (JSON lines, SkyRL's own: prompt, env_class, reward_spec, ...); task i is row i, `tasks` at most their count.",
    ),
    env_config: doc(libraryObject.default({}), "The env's config (SkyRL's env_config), as the env reads it."),
    db_path: doc(
      z.string().min(1).nullable().default(null),
      "text2sql: the folder of the databases (spider/database/<db_id>/<db_id>.sqlite, ...), each .sqlite file hashed in the plan.",
    ),
  },
  files: { rows: { tasksAreLines: true } },
  folders: { db_path: { extensions: [".sqlite"], recursive: true } },
  answers: true,
  check(config) {
    if (config.env_id === "text2sql" && config.db_path === null)
      return [
        {
          knob: "db_path",
          message: "text2sql reads its databases from a folder",
          hint: 'name it: db_path: "./databases"',
        },
      ];
    return [];
  },
});
