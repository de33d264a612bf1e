// An env server for the asynchronous-rollout benchmark whose reset and steps take real time
// (argv: step ms, reset ms), like an env behind a container or a remote tool: one process, one
// session per episode, speaking the http env kind's wire format (src/envs/adapters/http.ts). It prints
// `port N` on stdout once it listens on 127.0.0.1. Task t asks for `step` called 1 + t % 3
// times; `noop` does nothing. Bench infrastructure, not a user env.
// With a third argument (a Pareto shape alpha) and a fourth (a cap), each episode's times are
// multiplied by a pace drawn at reset from Pareto(alpha) (minimum 1, at most the cap), seeded by
// the episode's seed: episode durations are heavy-tailed, as agentic episodes are, so that a
// batch waits for its slowest episode. A server rather than a process per episode: starting a
// process costs the CPUs tens of milliseconds, which on a small machine the trainer would pay.
import { createServer } from "node:http";
import { derivedRandom } from "../contracts/random.js";

const baseStepMs = Number(process.argv[2] ?? 50);
const baseResetMs = Number(process.argv[3] ?? 50);
const alpha = process.argv[4] === undefined ? undefined : Number(process.argv[4]);
const cap = Number(process.argv[5] ?? 16);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Session {
  /** The episode's step time (its pace drawn at reset). */
  readonly stepMs: number;
  readonly goal: number;
  count: number;
}
const sessions = new Map<number, Session>();
let nextSession = 1;

type Body = { task?: number; index?: number; seed?: number; session?: number; call?: { name: string } };

async function answer(op: string, m: Body): Promise<object> {
  if (op === "reset") {
    // Inverse-CDF draw: U^(-1/alpha) is Pareto(alpha) with minimum 1.
    const pace = alpha === undefined ? 1 : Math.min(cap, (1 - derivedRandom(m.seed ?? 0, "pace")()) ** (-1 / alpha));
    await sleep(baseResetMs * pace);
    const session = nextSession++;
    const goal = 1 + ((m.index ?? 0) % 3);
    sessions.set(session, { stepMs: baseStepMs * pace, goal, count: 0 });
    return { session, observation: `Call step ${goal} times.`, signals: { progress: 0 } };
  }
  const s = sessions.get(m.session ?? -1);
  if (op === "close") {
    sessions.delete(m.session ?? -1);
    return {};
  }
  if (!s) return { error: `unknown session ${m.session}` };
  if (op === "step") {
    await sleep(s.stepMs);
    if (m.call?.name === "step") s.count++;
    return {
      observation: `count ${s.count}`,
      signals: { progress: Math.min(1, s.count / s.goal) },
      terminated: s.count >= s.goal,
    };
  }
  if (op === "outcome") return { signals: { success: s.count >= s.goal } };
  return { error: `unknown op ${op}` };
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (c: Buffer) => chunks.push(c));
  request.on("end", () => {
    const op = (request.url ?? "").replace(/^\//, "");
    void answer(op, JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Body).then((body) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    });
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`port ${typeof address === "object" && address ? address.port : 0}\n`);
});
