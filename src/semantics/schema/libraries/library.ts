// What an env library served by the env host declares (docs/env-host.md, "Adding a library"):
// its kind (the library's name in runtime-gpu/arl_envhost/backends/), its typed knobs (zod, with
// a doc and a default each, like every env field), which knobs name a folder of the user's data
// files, and the checks of its knobs that need no Python. Everything else (the plan's form of the
// knobs, lowering, the episodes over the host, walkthroughs, vocabulary) is shared.
import * as z from "zod";
import { doc, positiveInt } from "../common.js";

/** A knob's check that needs no Python: a message and a hint, or undefined when the value is fine. */
export interface KnobProblem {
  /** The knob's name, where the diagnostic points. */
  readonly knob: string;
  readonly message: string;
  readonly hint: string;
}

export interface HostLibrary<K extends string = string, S extends z.ZodRawShape = z.ZodRawShape> {
  readonly kind: K;
  /** The knobs of the library, each `doc(schema.default(...), "...")`; plain JSON values in the plan. */
  readonly knobs: S;
  /** Knobs holding the path of a folder of the user's files (confined, each file hashed in the plan), with the file extensions read. */
  readonly folders?: Readonly<Record<string, readonly string[]>>;
  /** Checks of a whole config that need no Python (an impossible size); `tasks` is the env's task count. */
  readonly check?: (config: Readonly<Record<string, unknown>>) => readonly KnobProblem[];
  /** A turn without a tool call is the episode's answer, scored by the backend's `answer` (single-turn tasks). */
  readonly answers?: boolean;
  /** How many tasks a config has when its knobs say so (a seed list); undefined: the env's `tasks`. */
  readonly taskCount?: (config: Readonly<Record<string, unknown>>) => number | undefined;
}

/** The knobs every host library has. */
export const hostCommonKnobs = {
  timeout_s: doc(z.number().positive().default(30), "Time limit of one call to the library (an episode's open, step or outcome); a call running longer ends its episode as an env error."),
  action_tool: doc(
    z.string().min(1).default("act"),
    "The tool whose one string parameter is the free-text action (its value is sent to the library as it is); a call of another tool (text_action verbs) is sent as its name and arguments joined by spaces.",
  ),
  prepare_timeout_s: doc(positiveInt.default(3600), "Time limit of preparing the env's tasks at provision (generating and hashing games)."),
};

/** A library's declaration, typed. */
export function hostLibrary<const K extends string, const S extends z.ZodRawShape>(library: HostLibrary<K, S>): HostLibrary<K, S> {
  return library;
}
