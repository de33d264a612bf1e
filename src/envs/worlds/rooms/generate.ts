// Procedural generation: a task id and the env's parameters (rooms, objects, quest_length,
// version) determine one world. Every random choice comes from one sfc32 stream keyed by those
// values, so a task is the same world on every machine.
//
// The quest is chosen by search, not built backwards: a world is drawn, candidate goals are
// tried in a seeded order (single put-goals first, then single take/open goals, then pairs, then
// triples of atoms on distinct things), and the first goal whose optimal solution (solver.ts)
// is exactly quest_length steps is the quest. When no goal of a world fits, the next world is
// drawn from the same stream.
//
// Guarantee: whenever the search finds such a goal, the quest's optimal length IS quest_length
// (`World.optimal`, and the walkthrough's length). Measured over tasks 0..999 of w2-o3-q4 and
// sampled tasks of w4-o6-q8, w3-o5-q6, w8-o12-q4, w10-o20-q12: always (tests pin w2-o3-q4 and
// w4-o6-q8). It cannot be found when the world is too small for the length: 1 room and 1 object
// allow only 1-step quests; w2-o3 is exact up to q6 (q7 for some tasks), w3-o4 up to q9, w4-o6
// up to q14 or so. The search then stops (after MAX_ATTEMPTS worlds, MAX_STALE worlds without
// getting closer, or MAX_SEARCH_NODES solver states) and the quest is the goal seen whose optimum
// is closest to quest_length (shorter preferred); `World.optimal` and the walkthrough give its
// true length, which then differs from the plan's quest_length / optimal_steps. Such sizes are
// also slow to create (up to about a second a world for w8-o12-q30); feasible ones take about
// 1 ms (w2-o3-q4) to 3 ms (w4-o6-q8).
import { at as element } from "../../../contracts/checked.js";
import { rngFromKey, type Rng } from "./random.js";
import { solve } from "./solver.js";
import {
  COLORS,
  CONTAINER_NOUNS,
  DIRECTIONS,
  ITEM_NOUNS,
  KEY_NOUN,
  MAX_OBJECTS,
  MAX_ROOMS,
  OFFSET,
  OPPOSITE,
  ROOM_NOUNS,
  SUPPORTER_NOUNS,
  type Atom,
  type Direction,
  type Room,
  type Thing,
  type World,
} from "./world.js";

export interface RoomsParams {
  readonly rooms: number;
  readonly objects: number;
  readonly quest_length: number;
  readonly version: string;
}

/** Worlds drawn per task before falling back to the closest quest length... */
export const MAX_ATTEMPTS = 40;
/** ...or fewer: the search stops after this many worlds that brought no goal closer to it. */
const MAX_STALE = 16;
/**
 * ...or when the solver has visited this many states in all: a deterministic work limit that
 * only quest lengths beyond what the world allows reach (feasible sizes need far fewer: w2-o3-q4
 * at most ~500, w4-o6-q8 ~6,000, w4-o6-q14 ~65,000).
 */
const MAX_SEARCH_NODES = 250_000;
/** Candidate goals tried per world, by tier. */
const MAX_PAIRS = 48;
const MAX_TRIPLES = 48;

function checkParams(p: RoomsParams): void {
  if (!Number.isInteger(p.rooms) || p.rooms < 1 || p.rooms > MAX_ROOMS)
    throw new Error(`rooms env: rooms must be 1..${MAX_ROOMS}, got ${p.rooms}`);
  if (!Number.isInteger(p.objects) || p.objects < 1 || p.objects > MAX_OBJECTS) {
    throw new Error(
      `rooms env: objects must be 1..${MAX_OBJECTS} (a quest needs at least one object), got ${p.objects}`,
    );
  }
  if (!Number.isInteger(p.quest_length) || p.quest_length < 1)
    throw new Error(`rooms env: quest_length must be a positive integer, got ${p.quest_length}`);
}

function worldKey(p: RoomsParams, task: number): string {
  return `arl-rooms|v=${p.version}|w${p.rooms}-o${p.objects}-q${p.quest_length}|task=${task}`;
}

function layout(rng: Rng, n: number): Room[] {
  const names =
    n <= ROOM_NOUNS.length
      ? rng.shuffle(ROOM_NOUNS).slice(0, n)
      : rng.shuffle(COLORS.flatMap((c) => ROOM_NOUNS.map((r) => `${c} ${r}`))).slice(0, n);
  const pos: [number, number][] = [[0, 0]];
  const cell = new Map<string, number>([["0,0", 0]]);
  const exits: Partial<Record<Direction, number>>[] = [{}];
  const link = (a: number, d: Direction, b: number) => {
    element(exits, a)[d] = b;
    element(exits, b)[OPPOSITE[d]] = a;
  };
  // A random spanning tree on the grid: each new room is attached to a free side of an old one.
  while (pos.length < n) {
    const from = rng.int(pos.length);
    const [fx, fy] = element(pos, from);
    const free = DIRECTIONS.filter((d) => !cell.has(`${fx + OFFSET[d][0]},${fy + OFFSET[d][1]}`));
    if (free.length === 0) continue;
    const d = rng.pick(free);
    const xy: [number, number] = [fx + OFFSET[d][0], fy + OFFSET[d][1]];
    const id = pos.length;
    pos.push(xy);
    cell.set(`${xy[0]},${xy[1]}`, id);
    exits.push({});
    link(from, d, id);
  }
  // A few extra doors between rooms that are neighbours on the grid make loops.
  for (let a = 0; a < n; a++) {
    const [ax, ay] = element(pos, a);
    for (const d of ["south", "east"] as const) {
      const b = cell.get(`${ax + OFFSET[d][0]},${ay + OFFSET[d][1]}`);
      if (b !== undefined && element(exits, a)[d] === undefined && rng.chance(0.25)) link(a, d, b);
    }
  }
  return names.map((name, i) => ({ name, exits: element(exits, i) }));
}

interface Drawn {
  readonly rooms: Room[];
  readonly things: Thing[];
  readonly start: Int16Array;
}

function drawWorld(rng: Rng, p: RoomsParams): Drawn {
  const rooms = layout(rng, p.rooms);
  const R = rooms.length;
  const T = p.objects;
  // How many receptacles (containers and supporters): about a third of the objects.
  let receptacles = T === 1 ? 0 : Math.round(T * (0.25 + 0.2 * rng.next()));
  receptacles = Math.max(receptacles, T === 1 ? 0 : 1, T - ITEM_NOUNS.length - 1);
  receptacles = Math.min(receptacles, T - 1, CONTAINER_NOUNS.length + SUPPORTER_NOUNS.length);
  let containers = 0;
  for (let k = 0; k < receptacles; k++) if (rng.chance(0.7)) containers++;
  containers = Math.min(Math.max(containers, receptacles - SUPPORTER_NOUNS.length), CONTAINER_NOUNS.length);
  const supporters = receptacles - containers;
  const portables = T - receptacles;
  // At most one key (one locked container): needs a container and a second portable thing
  // (or all item nouns in use).
  const hasKey = containers > 0 && portables >= 2 && (portables > ITEM_NOUNS.length || rng.chance(0.55));

  const things: Thing[] = [];
  const containerNames = rng.shuffle(CONTAINER_NOUNS).slice(0, containers);
  const supporterNames = rng.shuffle(SUPPORTER_NOUNS).slice(0, supporters);
  const lockedIndex = hasKey ? rng.int(containers) : -1;
  const keyIndex = containers + supporters; // the key, when there is one, comes right after the receptacles
  containerNames.forEach((name, k) =>
    things.push({ name, kind: "container", room: rng.int(R), ...(k === lockedIndex ? { key: keyIndex } : {}) }),
  );
  for (const name of supporterNames) things.push({ name, kind: "supporter", room: rng.int(R) });
  if (hasKey) things.push({ name: KEY_NOUN, kind: "key", room: -1 });
  for (const name of rng.shuffle(ITEM_NOUNS).slice(0, portables - (hasKey ? 1 : 0)))
    things.push({ name, kind: "item", room: -1 });

  const start = new Int16Array(1 + 2 * T);
  start[0] = rng.int(R);
  things.forEach((t, i) => {
    if (t.kind === "container") {
      start[1 + i] = t.room;
      start[1 + T + i] = t.key !== undefined ? 0 : rng.chance(0.55) ? 0 : 1;
    } else if (t.kind === "supporter") {
      start[1 + i] = t.room;
      start[1 + T + i] = 1;
    } else {
      // On a floor, or on/in a receptacle (never inside the container its own key opens).
      const places = things.flatMap((r, j) =>
        (r.kind === "container" || r.kind === "supporter") && r.key !== i ? [j] : [],
      );
      start[1 + i] = places.length > 0 && rng.chance(0.55) ? R + rng.pick(places) : rng.int(R);
    }
  });
  return { rooms, things, start };
}

function candidateGoals(rng: Rng, things: readonly Thing[], start: Int16Array, R: number): Atom[][] {
  const T = things.length;
  const put: Atom[] = [];
  const other: Atom[] = [];
  things.forEach((t, i) => {
    if (t.kind === "item" || t.kind === "key") {
      other.push({ type: "holding", item: i });
      things.forEach((r, j) => {
        if ((r.kind === "container" || r.kind === "supporter") && start[1 + i] !== R + j)
          put.push({ type: "in", item: i, target: j });
      });
    } else if (t.kind === "container" && start[1 + T + i] === 0) other.push({ type: "open", target: i });
  });
  const atoms = [...put, ...other];
  // Atoms of one goal move distinct things, and a goal does not ask to open what it also fills.
  const movesOf = (a: Atom): number => (a.type === "open" ? a.target : a.item);
  const compatible = (g: readonly Atom[]) => {
    const moved = g.map(movesOf);
    if (new Set(moved).size !== moved.length) return false;
    const filled = g.flatMap((a) => (a.type === "in" ? [a.target] : []));
    return g.every((a) => a.type !== "open" || !filled.includes(a.target));
  };
  const pairs: Atom[][] = [];
  atoms.forEach((a, x) => {
    for (const b of atoms.slice(x + 1)) if (compatible([a, b])) pairs.push([a, b]);
  });
  const triples: Atom[][] = [];
  if (atoms.length >= 3) {
    for (let k = 0; k < MAX_TRIPLES * 4 && triples.length < MAX_TRIPLES; k++) {
      const g = rng.shuffle(atoms).slice(0, 3);
      if (compatible(g)) triples.push(g);
    }
  }
  return [
    ...rng.shuffle(put).map((a) => [a]),
    ...rng.shuffle(other).map((a) => [a]),
    ...rng.shuffle(pairs).slice(0, MAX_PAIRS),
    ...triples,
  ];
}

/** The world of task `task`: deterministic in (version, rooms, objects, quest_length, task). */
export function generateWorld(p: RoomsParams, task: number): World {
  checkParams(p);
  const rng = rngFromKey(worldKey(p, task));
  let best: { world: World; gap: number } | undefined;
  let lastGain = 0;
  const work = { nodes: 0 };
  for (
    let attempt = 0;
    attempt < MAX_ATTEMPTS && attempt - lastGain < MAX_STALE && work.nodes < MAX_SEARCH_NODES;
    attempt++
  ) {
    const drawn = drawWorld(rng, p);
    for (const goal of candidateGoals(rng, drawn.things, drawn.start, drawn.rooms.length)) {
      if (work.nodes >= MAX_SEARCH_NODES) break;
      const world: World = { ...drawn, goal, optimal: 0 };
      // Search one step past the target length: enough to rank goals for the fallback.
      const sol = solve(world, drawn.start, goal, p.quest_length + 1, work);
      const steps = sol?.steps ?? p.quest_length + 2;
      if (steps === 0) continue;
      if (steps === p.quest_length) return { ...world, optimal: steps };
      // Closest length wins; shorter before longer at the same distance.
      const gap = Math.abs(steps - p.quest_length) * 2 + (steps > p.quest_length ? 1 : 0);
      if (sol && (!best || gap < best.gap)) {
        best = { world: { ...world, optimal: steps }, gap };
        lastGain = attempt;
      }
    }
  }
  if (!best) {
    // Every goal of every world was longer than quest_length + 1: take one more world's first
    // goal at its true length (all goals are solvable: the one key is never locked in its own box).
    const drawn = drawWorld(rng, p);
    const goal = element(candidateGoals(rng, drawn.things, drawn.start, drawn.rooms.length), 0);
    const world: World = { ...drawn, goal, optimal: 0 };
    const sol = solve(world, drawn.start, goal);
    if (!sol)
      throw new Error(`rooms env: no solvable quest for task ${task} (w${p.rooms}-o${p.objects}-q${p.quest_length})`);
    return { ...world, optimal: sol.steps };
  }
  return best.world;
}
