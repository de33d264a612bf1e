// A subprocess env for the asynchronous-rollout benchmark whose reset and steps take real time
// (argv: step ms, reset ms), like an env behind a container or a remote tool. Task t asks for
// `step` called 1 + t % 3 times; `noop` does nothing. Bench infrastructure, not a user env.
// With a fourth argument (a Pareto shape alpha) and a fifth (a cap), each episode's times are
// multiplied by a pace drawn at reset from Pareto(alpha) (minimum 1, at most the cap), seeded by
// the episode's seed: episode durations are heavy-tailed, as agentic episodes are, so that a
// batch waits for its slowest episode.
import { createInterface } from "node:readline";
import { derivedRandom } from "../contracts/random.js";

const baseStepMs = Number(process.argv[2] ?? 50);
const baseResetMs = Number(process.argv[3] ?? 50);
const alpha = process.argv[4] === undefined ? undefined : Number(process.argv[4]);
const cap = Number(process.argv[5] ?? 16);
/** The current episode's step time (its pace drawn at reset). */
let stepMs = baseStepMs;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const reply = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);

let goal = 1;
let count = 0;
for await (const line of createInterface({ input: process.stdin })) {
  const m = JSON.parse(line) as { op: string; task?: number; seed?: number; call?: { name: string } };
  if (m.op === "reset") {
    // Inverse-CDF draw: U^(-1/alpha) is Pareto(alpha) with minimum 1.
    const pace = alpha === undefined ? 1 : Math.min(cap, (1 - derivedRandom(m.seed ?? 0, "pace")()) ** (-1 / alpha));
    stepMs = baseStepMs * pace;
    const resetMs = baseResetMs * pace;
    await sleep(resetMs);
    goal = 1 + ((m.task ?? 0) % 3);
    count = 0;
    reply({ observation: `Call step ${goal} times.`, signals: { progress: 0 } });
  } else if (m.op === "step") {
    await sleep(stepMs);
    if (m.call?.name === "step") count++;
    reply({ observation: `count ${count}`, signals: { progress: Math.min(1, count / goal) }, terminated: count >= goal });
  } else if (m.op === "outcome") {
    reply({ signals: { success: count >= goal } });
  } else if (m.op === "close") {
    process.exit(0);
  }
}
