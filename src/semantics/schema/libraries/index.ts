// The env libraries the env host serves, each an env kind (docs/env-host.md, "Adding a library").
// Adding one: its declaration file here and one entry below, and its backend module with its line
// in runtime-gpu/arl_envhost/backends/__init__.py.
import { textworldLibrary } from "./textworld.js";

export const hostLibraries = [textworldLibrary] as const;
