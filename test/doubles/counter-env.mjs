#!/usr/bin/env node
// A subprocess env for runtime tests (JSON lines on stdin/stdout): task t asks to call `step`
// 1 + t % 3 times; `noop` does nothing. CRASH_ON_TASK makes that task's env exit mid-episode,
// CRASH_UNLESS_SEED_MOD=N every episode's whose seed is not a multiple of N at its end (most of a
// batch, not all); HANG_ON_STEP=1 makes every step go unanswered (a hung env).
import { createInterface } from "node:readline";

let goal = 1;
let count = 0;
let task = 0;
let seed = 0;
const reply = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  const m = JSON.parse(line);
  if (m.op === "reset") {
    task = m.task;
    seed = m.seed;
    goal = 1 + (m.task % 3);
    count = 0;
    reply({ observation: `Call step ${goal} times.`, signals: { progress: 0 } });
  } else if (m.op === "step") {
    if (process.env.CRASH_ON_TASK && Number(process.env.CRASH_ON_TASK) === task) process.exit(9);
    if (process.env.HANG_ON_STEP === "1") continue;
    if (m.call.name === "step") count++;
    reply({
      observation: `count ${count}`,
      signals: { progress: Math.min(1, count / goal) },
      terminated: count >= goal,
    });
  } else if (m.op === "outcome") {
    if (process.env.CRASH_UNLESS_SEED_MOD && seed % Number(process.env.CRASH_UNLESS_SEED_MOD) !== 0) process.exit(9);
    reply({ signals: { success: count >= goal } });
  } else if (m.op === "close") {
    process.exit(0);
  }
}
