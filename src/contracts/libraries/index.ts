// The env libraries the env host serves, each an env kind (docs/env-host.md, "Adding a library").
// Adding one: its declaration file here and one entry below, and its backend module with its line
// in runtime-gpu/arl_envhost/backends/__init__.py.
import { gymnasiumLibrary } from "./gymnasium.js";
import { reasoningGymLibrary } from "./reasoning-gym.js";
import { skyrlGymLibrary } from "./skyrl-gym.js";
import { textarenaLibrary } from "./textarena.js";
import { textworldExpressLibrary } from "./textworld-express.js";
import { textworldLibrary } from "./textworld.js";

export const hostLibraries = [
  textworldLibrary,
  textworldExpressLibrary,
  reasoningGymLibrary,
  textarenaLibrary,
  skyrlGymLibrary,
  gymnasiumLibrary,
] as const;
