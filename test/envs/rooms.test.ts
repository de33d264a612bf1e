import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseTextAction, ToolCallValidator, type ToolCall } from "../../src/contracts/tool-calls.js";
import { envKinds } from "../../src/envs/registry.js";
import { generateWorld, MAX_ATTEMPTS } from "../../src/envs/worlds/rooms/generate.js";
import { type RoomsGame, roomsEnv, type RoomsEnv } from "../../src/envs/worlds/rooms/index.js";
import { act } from "../../src/envs/worlds/rooms/rules.js";
import { solve } from "../../src/envs/worlds/rooms/solver.js";
import { roomsVocabulary, words } from "../../src/envs/worlds/rooms/vocabulary.js";
import { DIRECTIONS, goalHolds, stateKey, type State, type World } from "../../src/envs/worlds/rooms/world.js";
import type { Plan } from "../../src/plan/schema.js";
import { splitTasks } from "../../src/plan/splits.js";
import { runEpisode } from "../../src/episode/harness.js";
import { callText } from "../../src/runtime/run/cold-start/sft.js";
import { compilePlans } from "../helpers/plans.js";
import { ScriptedPolicy } from "../helpers/scripted.js";

/** A plan around the stdlib's w2-o3-q4 world, as experiments/quickstart.arl uses it (text actions). */
function quickstart(): Plan {
  const [p] = compilePlans(`
import "std/envs/rooms" as rooms
experiment rooms_test {
  policy { model: "builtin:tiny", sampling { max_new_tokens: 24 } }
  env quest extends rooms.world {}
  harness { tools: quest.tools, format: text_action, max_turns: 8, max_response_tokens: 24 }
  reward { success: outcome.success }
}
`);
  return p!;
}

const plan = quickstart();
const base = plan.envs.quest as RoomsEnv;
const sized = (rooms: number, objects: number, quest_length: number, version = base.version): RoomsEnv => ({
  ...base,
  rooms,
  objects,
  quest_length,
  version,
  optimal_steps: null,
});
const W4 = sized(4, 6, 8);

async function game(env: RoomsEnv, task: number): Promise<RoomsGame> {
  return (await roomsEnv.create(env, task, 0)) as RoomsGame;
}

/** Replays the walkthrough; returns every observation text and the progress after each step. */
async function replay(env: RoomsEnv, task: number) {
  const calls = (await roomsEnv.walkthrough!(env, task))!;
  const g = await game(env, task);
  const start = await g.reset();
  const texts = [start.text];
  const progress = [start.signals.progress];
  const terminated: boolean[] = [];
  for (const call of calls) {
    const r = await g.step(call);
    texts.push(r.text);
    progress.push(r.signals.progress);
    terminated.push(r.terminated);
    expect(r.signals.invalid_actions).toBe(0);
  }
  return { calls, g, texts, progress, terminated, outcome: await g.outcome() };
}

/** Unpruned BFS over every action the tools can express with the world's names: checks the solver's pruning. */
function bruteForce(w: World): number | undefined {
  const names = w.things.map((t) => t.name);
  const calls: ToolCall[] = [
    ...DIRECTIONS.map((d) => ({ name: "go", arguments: { direction: d } })),
    ...names.map((n) => ({ name: "take", arguments: { object: n } })),
    ...names.map((n) => ({ name: "open", arguments: { target: n } })),
    ...names.flatMap((a) => names.map((b) => ({ name: "put", arguments: { object: a, target: b } }))),
  ];
  let frontier: State[] = [w.start];
  const seen = new Set([stateKey(w.start)]);
  for (let depth = 0; frontier.length > 0; depth++) {
    if (frontier.some((s) => goalHolds(w, s))) return depth;
    const next: State[] = [];
    for (const s of frontier) {
      for (const c of calls) {
        const r = act(w, s, c);
        if (r.invalid || seen.has(stateKey(r.state))) continue;
        seen.add(stateKey(r.state));
        next.push(r.state);
      }
    }
    frontier = next;
  }
  return undefined;
}

const vocabulary = new Set(roomsVocabulary());
const outside = (text: string) => words(text).filter((w) => !vocabulary.has(w));

describe("rooms env: generation", () => {
  it("is registered as the built-in kind 'rooms'", () => {
    expect(envKinds.get("rooms")).toBe(roomsEnv);
    expect(base).toMatchObject({ kind: "rooms", rooms: 2, objects: 3, quest_length: 4, optimal_steps: 4 });
  });

  it("is deterministic: the same task is the same world and text; tasks and versions differ", async () => {
    for (const task of [0, 7, 123]) {
      const a = await (await game(base, task)).reset();
      const b = await (await game(base, task)).reset();
      expect(a).toEqual(b);
      expect(generateWorld({ ...base }, task)).toEqual(generateWorld({ ...base }, task));
      expect(await roomsEnv.walkthrough!(base, task)).toEqual(await roomsEnv.walkthrough!(base, task));
    }
    const intros = await Promise.all(Array.from({ length: 50 }, async (_, t) => (await game(base, t)).intro()));
    expect(new Set(intros).size).toBeGreaterThanOrEqual(48);
    const other = await Promise.all(
      Array.from({ length: 20 }, async (_, t) => (await game(sized(2, 3, 4, "2"), t)).intro()),
    );
    expect(other.filter((text, t) => text !== intros[t]).length).toBeGreaterThanOrEqual(18);
  });

  it("gives the same worlds on every machine (pinned: a change to generation must bump the env's version)", async () => {
    const texts = await Promise.all(Array.from({ length: 10 }, async (_, t) => (await game(base, t)).intro()));
    expect((await game(base, 0)).intro()).toBe(
      "Your task: put the shoe on the stool and take the spoon.\n\nYou are in the hallway. You see a shoe. Exits: east.",
    );
    expect(createHash("sha256").update(texts.join("\n--\n")).digest("hex").slice(0, 16)).toMatchInlineSnapshot(
      `"f3339995bbcf46da"`,
    );
  });

  it("builds consistent, connected maps with unique one-word object names", () => {
    for (const env of [base, W4, sized(12, 20, 10)]) {
      for (let task = 0; task < 30; task++) {
        const w = generateWorld(env, task);
        expect(w.rooms.length).toBe(env.rooms);
        expect(w.things.length).toBe(env.objects);
        w.rooms.forEach((room, r) => {
          for (const [d, to] of Object.entries(room.exits)) {
            const back = { north: "south", south: "north", east: "west", west: "east" }[
              d
            ] as (typeof DIRECTIONS)[number];
            expect(w.rooms[to]!.exits[back]).toBe(r);
          }
        });
        const reached = new Set([0]);
        for (const r of reached) for (const to of Object.values(w.rooms[r]!.exits)) reached.add(to);
        expect(reached.size).toBe(env.rooms);
        const names = w.things.map((t) => t.name);
        expect(new Set(names).size).toBe(names.length);
        for (const n of names) expect(n).toMatch(/^[a-z]+$/);
        expect(w.things.filter((t) => t.kind === "key").length).toBeLessThanOrEqual(1);
        expect(w.things.filter((t) => t.key !== undefined).length).toBe(
          w.things.filter((t) => t.kind === "key").length,
        );
      }
    }
  });
});

describe("rooms env: solver and walkthroughs", () => {
  it("solves every task of the stdlib w2-o3-q4 world in exactly quest_length = optimal_steps = 4 steps, and the replay succeeds", async () => {
    for (let task = 0; task < base.tasks; task++) {
      const { calls, progress, terminated, outcome } = await replay(base, task);
      expect(calls.length).toBe(4);
      expect(calls.length).toBe(base.optimal_steps);
      expect(progress).toEqual([0, 0.25, 0.5, 0.75, 1]);
      expect(terminated).toEqual([false, false, false, true]);
      expect(outcome).toEqual({ success: true });
    }
  });

  it("solves w4-o6-q8 and other sizes in exactly quest_length steps, replays to success with progress 1", async () => {
    for (const [env, n] of [
      [W4, 200],
      [sized(3, 5, 6), 60],
      [sized(2, 3, 1), 30],
      [sized(8, 12, 4), 30],
      [sized(6, 10, 12), 20],
    ] as const) {
      for (let task = 0; task < n; task++) {
        const { calls, progress, terminated, outcome } = await replay(env, task);
        expect(calls.length).toBe(env.quest_length);
        expect(progress[progress.length - 1]).toBe(1);
        expect(progress.slice(0, -1).every((p) => typeof p === "number" && p >= 0 && p < 1)).toBe(true);
        expect(terminated.indexOf(true)).toBe(calls.length - 1);
        expect(outcome.success).toBe(true);
      }
    }
  });

  it("is optimal: the pruned solver matches an unpruned breadth-first search", () => {
    for (const [env, n] of [
      [base, 150],
      [sized(3, 4, 5), 40],
      [sized(2, 5, 6), 25],
      [sized(1, 3, 3), 20],
    ] as const) {
      for (let task = 0; task < n; task++) {
        const w = generateWorld(env, task);
        expect(solve(w, w.start)!.steps).toBe(bruteForce(w));
      }
    }
  });

  it("falls back to the closest length only when the world is too small for the quest", async () => {
    // One room and one object: the only quest is "take the X", one step.
    const tiny = sized(1, 1, 4);
    const w = generateWorld(tiny, 0);
    expect(w.optimal).toBe(1);
    expect(MAX_ATTEMPTS).toBeGreaterThan(0);
    const { calls, outcome } = await replay(tiny, 0);
    expect(calls.length).toBe(w.optimal);
    expect(outcome.success).toBe(true);
  });
});

describe("rooms env: actions", () => {
  it("refuses impossible actions with a helpful message, counts them, and leaves the state unchanged", async () => {
    // A task whose world has a locked container (the key elsewhere) and a room with a wall.
    let task = 0;
    for (; task < 500; task++) {
      const w = generateWorld(W4, task);
      if (w.things.some((t) => t.key !== undefined)) break;
    }
    const g = await game(W4, task);
    const w = g.world;
    const start = await g.reset();
    expect(start.signals).toEqual({ progress: 0, invalid_actions: 0 });
    expect(start.text).toMatch(/^Your task: .+\.\n\nYou are in the /);
    expect(w.things.some((t) => t.key !== undefined)).toBe(true);
    const wall = DIRECTIONS.find((d) => w.rooms[w.start[0]!]!.exits[d] === undefined);
    expect(wall).toBeDefined();
    let count = 0;
    const refused = async (call: ToolCall, message: string | RegExp) => {
      const before = g.intro();
      const r = await g.step(call);
      count++;
      expect(r.text).toMatch(message);
      expect(r.signals.invalid_actions).toBe(count);
      expect(r.terminated).toBe(false);
      expect(g.intro()).toBe(before);
    };
    await refused({ name: "go", arguments: { direction: wall } }, `You can't go ${wall} from here.`);
    await refused({ name: "go", arguments: { direction: "up" } }, "You can only go north, south, east or west.");
    const locked = w.things.findIndex((t) => t.key !== undefined);
    const lockedName = w.things[locked]!.name;
    // Walk to the locked container without the key and try it.
    const route = solve(w, w.start, [{ type: "open", target: locked }])!.calls.filter((c) => c.name === "go");
    for (const c of route) await g.step(c);
    const here = await g.step({ name: "look", arguments: {} });
    expect(here.text).toContain(`a locked ${lockedName}`);
    expect(here.signals.invalid_actions).toBe(count);
    await refused(
      { name: "open", arguments: { target: lockedName } },
      `The ${lockedName} is locked. You need the key.`,
    );
    await refused({ name: "put", arguments: { object: "key", target: lockedName } }, "You are not carrying the key.");
    await refused({ name: "take", arguments: { object: lockedName } }, `The ${lockedName} is too heavy to carry.`);
    await refused({ name: "take", arguments: { object: "xyzzy" } }, "You don't see that here.");
    await refused(
      { name: "dance", arguments: {} },
      "You can't do that. The actions are go, take, open, put, look and inventory.",
    );
    expect(await g.outcome()).toEqual({ success: false });
  });

  it("never throws on bad calls: unknown names, missing or odd arguments, unknown tools", async () => {
    const g = await game(base, 3);
    await g.reset();
    const bad: ToolCall[] = [
      { name: "take", arguments: {} },
      { name: "take", arguments: { object: "red key" } },
      { name: "take", arguments: { object: 42 } },
      { name: "take", arguments: { object: null } },
      { name: "open", arguments: {} },
      { name: "open", arguments: { target: ["chest"] } },
      { name: "put", arguments: {} },
      { name: "put", arguments: { object: "coin" } },
      { name: "put", arguments: { object: "zz", target: "qq" } },
      { name: "go", arguments: {} },
      { name: "go", arguments: { direction: { north: true } } },
      { name: "fly", arguments: { to: "moon" } },
      { name: "look", arguments: { extra: 1 } },
      { name: "take", arguments: undefined as unknown as Record<string, unknown> },
    ];
    let invalid = 0;
    for (const call of bad) {
      const r = await g.step(call);
      expect(typeof r.text).toBe("string");
      expect(r.text.length).toBeGreaterThan(0);
      expect(outside(r.text)).toEqual([]);
      if (call.name !== "look") invalid++;
      expect(r.signals.invalid_actions).toBe(invalid);
    }
    expect((await g.step({ name: "take", arguments: {} })).text).toBe("Take what?");
    expect((await g.step({ name: "put", arguments: { object: "zz", target: "qq" } })).text).toBe(
      "You are not carrying that.",
    );
  });

  it("reads lenient argument forms: articles, case, and a preposition before put's target", async () => {
    const task = 2; // "put the pen in the basket and put the candle in the basket", all in the first room
    const g = await game(base, task);
    await g.reset();
    expect((await g.step({ name: "take", arguments: { object: "The PEN" } })).text).toBe("You take the pen.");
    expect((await g.step({ name: "put", arguments: { object: "pen", target: "into the basket" } })).text).toBe(
      "You put the pen in the basket.",
    );
  });

  it("keeps progress a potential of the state: a step of the walkthrough raises it, stepping back restores it", async () => {
    for (let task = 0; task < 40; task++) {
      const w = generateWorld(W4, task);
      const calls = solve(w, w.start)!.calls;
      const first = calls.findIndex((c) => c.name === "go");
      if (first < 0) continue;
      const g = await game(W4, task);
      await g.reset();
      for (const c of calls.slice(0, first)) await g.step(c);
      const before = g.progress();
      const out = await g.step(calls[first]!);
      const dir = calls[first]!.arguments.direction as (typeof DIRECTIONS)[number];
      const back = { north: "south", south: "north", east: "west", west: "east" }[dir] as (typeof DIRECTIONS)[number];
      expect(out.signals.progress).toBeGreaterThan(before);
      const returned = await g.step({ name: "go", arguments: { direction: back } });
      expect(returned.signals.progress).toBe(before);
      for (const p of [before, out.signals.progress as number]) expect(p >= 0 && p < 1).toBe(true);
    }
  });

  it("isolates instances: stepping one episode never changes another or the task's world", async () => {
    const a = await game(base, 5);
    const b = await game(base, 5);
    await a.reset();
    await b.reset();
    const calls = (await roomsEnv.walkthrough!(base, 5))!;
    for (const c of calls) await a.step(c);
    expect(await a.outcome()).toEqual({ success: true });
    expect(await b.outcome()).toEqual({ success: false });
    expect(b.intro()).toBe((await game(base, 5)).intro());
    expect(b.world.start).toEqual((await game(base, 5)).world.start);
    const again = await a.reset();
    expect(again.signals).toEqual({ progress: 0, invalid_actions: 0 });
    expect(await a.outcome()).toEqual({ success: false });
  });
});

describe("rooms env: text_action and vocabulary", () => {
  it("walkthrough calls written as text parse back to the same calls (one-word names make put unambiguous)", async () => {
    const tools = plan.tools;
    for (const env of [base, W4]) {
      for (let task = 0; task < 100; task++) {
        for (const call of (await roomsEnv.walkthrough!(env, task))!) {
          const parsed = parseTextAction(callText(call, plan), tools);
          expect(parsed).toEqual({ kind: "call", call });
        }
      }
    }
  });

  it("runs a whole episode through the harness with text actions and ends in success", async () => {
    const calls = (await roomsEnv.walkthrough!(base, 11))!;
    const policy = new ScriptedPolicy(calls.map((c) => callText(c, plan)));
    const env = await roomsEnv.create(base, 11, 0);
    const ep = await runEpisode({
      plan,
      envName: "quest",
      env,
      policy,
      tools: plan.tools,
      validator: new ToolCallValidator(),
      stopIds: [],
      seed: (t) => t,
    });
    expect(ep.end).toBe("finished");
    expect(ep.episode).toMatchObject({ turns: 4, invalid_calls: 0, terminated: true });
    expect(ep.final.env("success")).toBe(true);
    expect(ep.final.env("progress")).toBe(1);
  });

  it("has a sorted, deterministic, closed vocabulary covering every observation and action", async () => {
    const v = roomsVocabulary();
    expect([...v]).toEqual([...new Set(v)].sort());
    expect(roomsEnv.vocabulary(W4)).toEqual(roomsEnv.vocabulary(base));
    expect(v.length).toBeLessThan(300);
    const nouns = [...v].filter((w) => /^[a-z]+$/.test(w));
    let seed = 1;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    for (const [env, n] of [
      [base, 25],
      [W4, 25],
      [sized(30, 35, 6), 6],
    ] as const) {
      for (let task = 0; task < n; task++) {
        const { texts, calls } = await replay(env, task);
        for (const t of texts) expect(outside(t)).toEqual([]);
        for (const c of calls) expect(outside(callText(c, plan))).toEqual([]);
        // A random policy, with words from the vocabulary and words from outside it.
        const g = await game(env, task);
        await g.reset();
        for (let k = 0; k < 60; k++) {
          const word = () => (random() < 0.1 ? "xyzzy" : pick(nouns));
          const name = pick(["go", "take", "open", "put", "look", "inventory", "dance"]);
          const call: ToolCall = {
            name,
            arguments: { direction: pick([...DIRECTIONS, "up"]), object: word(), target: word() },
          };
          const r = await g.step(call);
          expect(outside(r.text)).toEqual([]);
        }
      }
    }
  });

  it("splits tasks into disjoint train and test sets with the runtime's splitTasks", () => {
    const train = splitTasks("quest", base, "train");
    const test = splitTasks("quest", base, "test");
    expect(train.length).toBe(800);
    expect(test.length).toBe(200);
    const both = new Set([...train, ...test]);
    expect(both.size).toBe(1000);
    expect(train.some((t) => test.includes(t))).toBe(false);
    expect(splitTasks("quest", base, "test")).toEqual(test);
  });
});
