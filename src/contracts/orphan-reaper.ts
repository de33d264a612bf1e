// The orphan reaper (docs/architecture.md, "Interrupts and resume"): a small process that outlives
// the runtime for one purpose. A runtime killed with SIGKILL runs no exit hook, and a child busy in
// a long request (a trainer in a train_step, a server loading a model) neither reads its stdin nor
// sees it end, so it would run on orphaned. The reaper holds the read end of a pipe from the
// runtime; the kernel closes the write end however the runtime ends, and the reaper then kills
// every process group the runtime told it of and every process carrying one of the runtime's marks
// (process-mark.ts: what left the groups, such as torchrun's workers), and exits.
//
// Started by process-group.ts as `node orphan-reaper.js TOKEN`, in a group of its own; its stdin
// carries lines "+PID" (a group was started) and "-PID" (that group ended).
import { killGroup } from "./process-group.js";
import { killMarkedSync } from "./process-mark.js";

const token = process.argv[2];
const groups = new Set<number>();
let partial = "";
let reaped = false;

function reap(): void {
  if (reaped) return;
  reaped = true;
  for (const pid of groups) killGroup(pid);
  if (token) killMarkedSync(undefined, token);
  process.exit(0);
}

process.stdin.on("data", (chunk: Buffer) => {
  const lines = (partial + chunk.toString("latin1")).split("\n");
  partial = lines.pop() ?? "";
  for (const line of lines) {
    const pid = Number(line.slice(1));
    if (!Number.isInteger(pid) || pid <= 1) continue;
    if (line.startsWith("+")) groups.add(pid);
    else if (line.startsWith("-")) groups.delete(pid);
  }
});
process.stdin.on("end", reap);
process.stdin.on("close", reap);
process.stdin.on("error", reap);
