#!/usr/bin/env node
// A subprocess env for runtime tests (JSON lines on stdin/stdout): task t asks to call `step`
// 1 + t % 3 times; `noop` does nothing. CRASH_ON_TASK makes that task's env exit mid-episode;
// HANG_ON_STEP=1 makes every step go unanswered (a hung env).
import { createInterface } from "node:readline";

let goal = 1;
let count = 0;
let task = 0;
const reply = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  const m = JSON.parse(line);
  if (m.op === "reset") {
    task = m.task;
    goal = 1 + (m.task % 3);
    count = 0;
    reply({ observation: `Call step ${goal} times.`, signals: { progress: 0 } });
  } else if (m.op === "step") {
    if (process.env.CRASH_ON_TASK && Number(process.env.CRASH_ON_TASK) === task) process.exit(9);
    if (process.env.HANG_ON_STEP === "1") continue;
    if (m.call.name === "step") count++;
    reply({ observation: `count ${count}`, signals: { progress: Math.min(1, count / goal) }, terminated: count >= goal });
  } else if (m.op === "outcome") {
    reply({ signals: { success: count >= goal } });
  } else if (m.op === "close") {
    process.exit(0);
  }
}
