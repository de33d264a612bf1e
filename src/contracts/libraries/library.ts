// What an env library served by the env host declares (docs/env-host.md, "Adding a library"):
// its kind (the library's name in runtime-gpu/arl_envhost/backends/), its typed knobs (zod, with
// a doc and a default each, like every env field), which knobs name the user's data files or
// folders, and the checks of its knobs that need no Python. Everything else (the plan's form of
// the knobs, lowering, the episodes over the host, walkthroughs, vocabulary) is shared.
import * as z from "zod";
import { doc, positiveInt } from "../schema-primitives.js";

/** A knob's check that needs no Python: a message and a hint, or undefined when the value is fine. */
export interface KnobProblem {
  /** The knob's name, where the diagnostic points; a dotted path for a field of an object knob (config.min_terms). */
  readonly knob: string;
  readonly message: string;
  readonly hint: string;
}

/** A knob naming one data file: confined to the spec's folder and hashed in the plan like any data file. */
export interface DataFileKnob {
  /** The file is JSON lines, one task a line: `tasks` is at most its line count (its line count when not written). */
  readonly tasksAreLines?: boolean;
}

/** A knob naming a folder of data files: each file read is confined and hashed in the plan. */
export interface DataFolderKnob {
  /** The file extensions the library reads. */
  readonly extensions: readonly string[];
  /** Files in subfolders too (a database tree), not only the folder's own. */
  readonly recursive?: boolean;
  /** The extensions of the files that are tasks, one task a file in name order (`tasks` is their count); none: the folder is not the task list. */
  readonly taskExtensions?: readonly string[];
}

export interface HostLibrary<K extends string = string, S extends z.ZodRawShape = z.ZodRawShape> {
  readonly kind: K;
  /** The knobs of the library, each `doc(schema.default(...), "...")`; plain JSON values in the plan. */
  readonly knobs: S;
  /** Knobs holding the path of a folder of the user's files; the plan holds the folder's files with their sha256. */
  readonly folders?: { readonly [F in keyof S]?: DataFolderKnob };
  /** Knobs holding the path of one data file of the user's; the plan holds it with its sha256. */
  readonly files?: { readonly [F in keyof S]?: DataFileKnob };
  /** Checks of a whole config that need no Python (an impossible size); `tasks` is the env's task count. */
  readonly check?: (config: Readonly<Record<string, unknown>>) => readonly KnobProblem[];
  /** A turn without a tool call is the episode's answer, scored by the backend's `answer` (single-turn tasks). */
  readonly answers?: boolean;
  /** The backend has walkthroughs (an expert's actions), which `rollout.sft` replays as demonstrations. */
  readonly walkthroughs?: boolean;
  /** How many tasks a config has when its knobs say so (a seed list, a dataset size); undefined: the env's `tasks`. */
  readonly taskCount?: (config: Readonly<Record<string, unknown>>) => number | undefined;
  /** The library makes its tasks from a range of seeds when no list is given, so its config carries the env's `tasks` (their count). */
  readonly seededTasks?: boolean;
}

/** A knob that is the library's own object (a dataset's config, an env's constructor arguments): written as a block, handed over as JSON. */
export const libraryObject = z.record(z.string(), z.json());

/** The knobs every host library has. */
export const hostCommonKnobs = {
  timeout_s: doc(
    z.number().positive().default(30),
    "Time limit of one call to the library (an episode's open, step or outcome); a call running longer ends its episode as an env error.",
  ),
  action_tool: doc(
    z.string().min(1).default("act"),
    "The tool whose one string parameter is the free-text action (its value is sent to the library as it is); a call of another tool (text_action verbs) is sent as its name and arguments joined by spaces.",
  ),
  prepare_timeout_s: doc(
    positiveInt.default(3600),
    "Time limit of preparing the env's tasks at provision (generating and hashing games).",
  ),
};

/** `L[P]`'s entries, each kept only where it names one of L's knobs (a typo is a type error). */
type OfKnobs<L extends HostLibrary, P extends "folders" | "files"> = {
  readonly [F in keyof L[P]]: F extends keyof L["knobs"] ? L[P][F] : never;
};

/** A library's declaration, typed: its folder and file knobs are names of its knobs. */
export function hostLibrary<const L extends HostLibrary>(
  library: L & { readonly folders?: OfKnobs<L, "folders">; readonly files?: OfKnobs<L, "files"> },
): L {
  return library;
}
