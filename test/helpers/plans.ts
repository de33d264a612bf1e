// Compiling small specs to plans for runtime tests.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Compiler } from "../../src/compiler.js";
import { lowerModel } from "../../src/plan/lower.js";
import type { Plan } from "../../src/plan/schema.js";

export function compilePlans(spec: string): Plan[] {
  const dir = mkdtempSync(path.join(tmpdir(), "arl-plan-"));
  const file = path.join(dir, "spec.arl");
  writeFileSync(file, spec);
  const result = new Compiler().check(file);
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0 || !result.model)
    throw new Error(`spec does not compile:\n${errors.map((e) => `${e.range.start.line}: ${e.message}`).join("\n")}`);
  return lowerModel(result.model).plans.map((p) => p.plan);
}

/** A one-env experiment around a "counter" env whose tools are `step` and `write`. */
export function counterSpec(body: string): string {
  return `
experiment counter_test {
  policy { model: "builtin:tiny", sampling { max_new_tokens: 64 } }
  env counter {
    kind: subprocess
    command: ["counter-env"]
    signals {
      progress { scope: state, type: number, min: 0, max: 1 }
      success { scope: outcome, type: bool }
    }
    tool step { description: "advance the counter" }
    tool write {
      description: "write a value"
      parameters { value { type: string, enum: ["a", "b"] } }
    }
  }
  reward { success: outcome.success }
  ${body}
}
`;
}

/** test/doubles/counter-env.mjs: task t asks for `step` called 1 + t % 3 times. */
export const counterEnvScript = fileURLToPath(new URL("../doubles/counter-env.mjs", import.meta.url));
/** The built embedded CPU trainer's entry point (`npm test` builds first). */
export const embeddedTrainerMain = fileURLToPath(new URL("../../dist/trainer/embedded/main.js", import.meta.url));
/** The embedded CPU trainer as the runtime starts it for backend local. */
export const embeddedTrainer = { file: process.execPath, args: [embeddedTrainerMain] } as const;
/** The command line that starts the embedded trainer as built (`arl run --trainer-command`). */
export const embeddedTrainerCommand = `${process.execPath} ${embeddedTrainerMain}`;
/** `arl run`'s flag that starts the embedded trainer as built. */
export const embeddedTrainerFlag = ["--trainer-command", embeddedTrainerCommand] as const;
/** test/doubles/scripted-trainer.mjs: a protocol double whose policy calls `step` or `noop`. */
export const scriptedTrainerScript = fileURLToPath(new URL("../doubles/scripted-trainer.mjs", import.meta.url));

/**
 * The signals and tools of the counter task, as the counter env double and the reference HTTP
 * server's `counter` task expose them (the names the scripted trainer double calls).
 */
export const COUNTER_SIGNALS_AND_TOOLS = `
    signals {
      progress { scope: state, type: number, min: 0, max: 1 }
      success { scope: outcome, type: bool }
    }
    tool step { description: "advance the counter" }
    tool noop { description: "do nothing" }`;

/** `env counter` run by the counter env double as a subprocess. */
export function counterSubprocessEnv(tasks: number): string {
  return `env counter {
    kind: subprocess
    command: ["${process.execPath}", "${counterEnvScript}"]
    tasks: ${tasks}${COUNTER_SIGNALS_AND_TOOLS}
  }`;
}

/**
 * The runtime tests' experiment: the counter subprocess env (30 tasks), G = 4 with a
 * leave-one-out baseline, 3 tasks per batch; the caller gives the rollout block's body, the eval
 * block and anything else.
 */
export function countingExperiment(o: {
  readonly name: string;
  readonly seed: number;
  readonly rollout: string;
  readonly evaluation: string;
  readonly extra?: string;
}): string {
  return `
experiment ${o.name} {
  seed: ${o.seed}
  policy { model: "builtin:tiny" }
  ${counterSubprocessEnv(30)}
  harness { max_turns: 4 }
  reward { success: outcome.success }
  algorithm {
    group_size: 4
    advantage { baseline: leave_one_out }
  }
  rollout { tasks_per_batch: 3, concurrency: 6, ${o.rollout} }
  ${o.evaluation}
  ${o.extra ?? ""}
}
`;
}
