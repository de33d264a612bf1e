// Specs shared by the language-server tests.
import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO } from "./client.js";

export const LIB = `import "std/envs/findmax" as fm

/// A smaller findMax task set, shared by experiments.
env small extends fm.task {
  tasks: 100
}

/// Looks a word up.
tool lookup {
  description: "Look a word up in the dictionary."
  parameters {
    word { type: string }
  }
}
`;

export const MAIN = `import "std/algorithms" as algo
import "std/envs/findmax" as findmax
import "./lib" as lib

/// The demo experiment.
experiment demo {
  policy {
    model: "builtin:tiny"
  }

  env code extends findmax.task {
    split { train: 0.8, test: 0.2 }
  }

  harness {
    tools: [code.run_tests, code.finish]
    max_turns: 8
  }

  reward {
    success: 1.0 * outcome.tests_passed
  }

  algorithm extends algo.grpo {
    group_size: 4
    advantage { baseline: mean }
  }
}

experiment other {
  policy { model: "builtin:tiny" }
  env shared extends lib.small {}
  harness { tools: [shared.tools, lib.lookup] }
  reward { success: shared.success }
  algorithm extends algo.rloo {}
}
`;

export function stdlibText(rel: string): string {
  return readFileSync(path.join(REPO, "stdlib", rel), "utf8");
}

/** 0-based line of the first line of `text` that contains `needle`. */
export function lineOf(text: string, needle: string): number {
  const i = text.split("\n").findIndex((l) => l.includes(needle));
  if (i < 0) throw new Error(`'${needle}' not found`);
  return i;
}
