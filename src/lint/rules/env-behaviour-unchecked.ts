import { hostLibraries } from "../../contracts/libraries/index.js";
import type { LintRule } from "../rule.js";

/** The kinds whose answers come from code arl does not own: a server, a program, a library on the env host. */
const PROBED_KINDS = new Set<string>(["http", "subprocess", "agentrl", "openenv", ...hostLibraries.map((l) => l.kind)]);

export const envBehaviourUnchecked: LintRule = {
  code: "env-behaviour-unchecked",
  severity: "info",
  title: "An env whose behaviour the spec cannot show: probe it with arl env-check before a run",
  explanation: `The type checker and the other rules see what a spec declares of an env, not how the env behaves.
For arl's own worlds (rooms, findmax, sql, swe) and datasets the behaviour is arl's code (a
dataset's verifier file is a scoring function of the answer); an env served by a server (http,
agentrl, openenv), a program (subprocess, agent: verifiers tasksets included) or a library on the
env host (textworld, gymnasium, ...) answers with code arl has not seen. The faults that cost most there show
only when it runs: a reset that ignores its seed (every "exact regeneration" and replay is then
false), sessions that share state (concurrent episodes leak into each other), a signal outside its
declared range (it skews every advantage), a step that hangs. 'arl env-check SPEC' probes each env
of the plan for these with no trainer and no model, in seconds for most envs (docs/envs.md,
"Checking an environment"); after a run, 'arl replay RUN_DIR' plays the recorded episodes again and
compares every answer. An agent env's episode is a whole program that calls the model, which
env-check cannot drive: replay is its check. This note is informational; silence it with
\`allow { env-behaviour-unchecked: "checked with arl env-check" }\`.`,
  check(ctx) {
    // One note for the envs env-check probes, one for the agent programs: a spec with five servers gets two lines, not five.
    const probed: { name: string; what: string }[] = [];
    const agents: string[] = [];
    for (const [name, env] of Object.entries(ctx.config.env)) {
      if (env.kind === "agent") agents.push(name);
      else if (PROBED_KINDS.has(env.kind)) probed.push({ name, what: env.kind });
    }
    if (probed[0] !== undefined)
      ctx.report({
        at: ["env", probed[0].name],
        message: `env${probed.length > 1 ? "s" : ""} ${probed.map((p) => `'${p.name}' (${p.what})`).join(", ")} answer${probed.length > 1 ? "" : "s"} with code arl does not own: whether ${probed.length > 1 ? "each" : "it"} answers the same to the same task, seed and actions, keeps concurrent sessions apart and reports its signals within their declared ranges shows only when it runs`,
        hint: "probe before a run with 'arl env-check' on this spec (no trainer, no model); after a run, 'arl replay RUN_DIR' compares every answer with the recorded ones",
      });
    if (agents[0] !== undefined)
      ctx.report({
        at: ["env", agents[0]],
        message: `env${agents.length > 1 ? "s" : ""} ${agents.map((a) => `'${a}'`).join(", ")} ${agents.length > 1 ? "are agent programs" : "is an agent program"} (kind: agent) that talk${agents.length > 1 ? "" : "s"} to ${agents.length > 1 ? "their envs themselves" : "its env itself"}: whether ${agents.length > 1 ? "each" : "it"} reaches the same outcome from the same task, seed and model answers shows only when it runs`,
        hint: "after a run, 'arl replay RUN_DIR' runs the program again on its recorded model answers and compares its requests and outcome ('arl env-check' cannot drive a program)",
      });
  },
};
