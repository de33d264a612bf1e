// A subprocess env for the asynchronous-rollout benchmark whose reset and steps take real time
// (argv: step ms, reset ms), like an env behind a container or a remote tool. Task t asks for
// `step` called 1 + t % 3 times; `noop` does nothing. Bench infrastructure, not a user env.
import { createInterface } from "node:readline";

const stepMs = Number(process.argv[2] ?? 50);
const resetMs = Number(process.argv[3] ?? 50);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const reply = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);

let goal = 1;
let count = 0;
for await (const line of createInterface({ input: process.stdin })) {
  const m = JSON.parse(line) as { op: string; task?: number; call?: { name: string } };
  if (m.op === "reset") {
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
