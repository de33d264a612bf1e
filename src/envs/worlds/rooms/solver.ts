// An optimal solver: breadth-first search over world states, from any state to the goal.
//
// Optimality with a pruned action set. The search only tries actions that can matter:
//   - every `go` through an exit;
//   - `take` of a relevant portable thing that is reachable and not already where its goal puts it;
//   - `open` of a relevant closed container (with its key carried when it is locked);
//   - `put` of a carried thing into the target of one of the goal's `in` atoms.
// Relevant things are the closure of: goal items and targets; the container a relevant thing is
// in now; the key of a relevant locked container. Why no optimal plan needs anything else:
//   - no precondition of a relevant action reads an irrelevant thing's state (a relevant thing's
//     container and a relevant lock's key are relevant by the closure; a thing the player put
//     somewhere sits in an open receptacle, and containers never close), so actions on irrelevant
//     things can be deleted from any plan;
//   - carrying a thing dominates having put it down (nothing needs free hands, and every action
//     possible with it put down is possible while carrying it, except taking it back), so a `put`
//     that is not the last put of a goal item, together with the `take` that undoes it, can be
//     deleted, and so can a put that is never undone of a thing no goal atom places;
//   - taking back a thing that already satisfies its `in` atom is such an undoing take.
// Each deletion keeps the plan valid and makes it shorter, so BFS over the pruned actions finds
// the true optimum. Ties break by a fixed action order (directions N, S, E, W; things by index),
// so the walkthrough is deterministic.
import type { ToolCall } from "../../../contracts/tool-calls.js";
import { at as element } from "../../../contracts/checked.js";
import { act } from "./rules.js";
import {
  DIRECTIONS,
  INVENTORY,
  at,
  goalHolds,
  isOpen,
  isPortable,
  locOf,
  reachable,
  roomOf,
  stateKey,
  thingOf,
  type Atom,
  type State,
  type World,
} from "./world.js";

export interface Solution {
  readonly steps: number;
  readonly calls: readonly ToolCall[];
}

/** Things an optimal plan from `s` may act on (see above). */
function relevantThings(w: World, s: State, goal: readonly Atom[]): Set<number> {
  const rel = new Set<number>();
  for (const a of goal) {
    if (a.type !== "open") rel.add(a.item);
    if (a.type !== "holding") rel.add(a.target);
  }
  const R = w.rooms.length;
  for (let changed = true; changed;) {
    changed = false;
    for (const i of [...rel]) {
      const t = thingOf(w, i);
      const extra: number[] = [];
      if (isPortable(t)) {
        const loc = locOf(s, i);
        if (loc !== INVENTORY && loc >= R) extra.push(loc - R);
      }
      if (t.key !== undefined && !isOpen(w, s, i)) extra.push(t.key);
      for (const j of extra) {
        if (!rel.has(j)) {
          rel.add(j);
          changed = true;
        }
      }
    }
  }
  return rel;
}

function candidateCalls(w: World, s: State, goal: readonly Atom[], rel: readonly number[]): ToolCall[] {
  const calls: ToolCall[] = [];
  const room = roomOf(w, at(s));
  for (const d of DIRECTIONS) if (room.exits[d] !== undefined) calls.push({ name: "go", arguments: { direction: d } });
  const R = w.rooms.length;
  for (const i of rel) {
    const t = thingOf(w, i);
    if (isPortable(t)) {
      const placed = goal.some((a) => a.type === "in" && a.item === i && locOf(s, i) === R + a.target);
      if (!placed && reachable(w, s, i)) calls.push({ name: "take", arguments: { object: t.name } });
    } else if (
      t.kind === "container" &&
      t.room === at(s) &&
      !isOpen(w, s, i) &&
      (t.key === undefined || locOf(s, t.key) === INVENTORY)
    ) {
      calls.push({ name: "open", arguments: { target: t.name } });
    }
  }
  for (const a of goal) {
    if (
      a.type === "in" &&
      locOf(s, a.item) === INVENTORY &&
      thingOf(w, a.target).room === at(s) &&
      isOpen(w, s, a.target)
    ) {
      calls.push({ name: "put", arguments: { object: thingOf(w, a.item).name, target: thingOf(w, a.target).name } });
    }
  }
  return calls;
}

/**
 * The shortest sequence of calls from `from` to a state where `goal` holds; undefined when no
 * sequence of at most `maxSteps` exists. `work.nodes` accumulates the states visited.
 */
export function solve(
  w: World,
  from: State,
  goal: readonly Atom[] = w.goal,
  maxSteps = Number.POSITIVE_INFINITY,
  work?: { nodes: number },
): Solution | undefined {
  if (goalHolds(w, from, goal)) return { steps: 0, calls: [] };
  const states: State[] = [from];
  try {
    return search(w, from, goal, maxSteps, states);
  } finally {
    if (work) work.nodes += states.length;
  }
}

function search(w: World, from: State, goal: readonly Atom[], maxSteps: number, states: State[]): Solution | undefined {
  const rel = [...relevantThings(w, from, goal)].sort((a, b) => a - b);
  const parent: number[] = [-1];
  const via: ToolCall[] = [{ name: "", arguments: {} }];
  const depth: number[] = [0];
  const seen = new Set<string>([stateKey(from)]);
  for (let head = 0; head < states.length; head++) {
    const s = element(states, head);
    const sDepth = element(depth, head);
    if (sDepth >= maxSteps) continue;
    for (const call of candidateCalls(w, s, goal, rel)) {
      const r = act(w, s, call, false);
      if (r.invalid) continue;
      const key = stateKey(r.state);
      if (seen.has(key)) continue;
      seen.add(key);
      states.push(r.state);
      parent.push(head);
      via.push(call);
      depth.push(sDepth + 1);
      if (goalHolds(w, r.state, goal)) {
        const calls: ToolCall[] = [];
        for (let k = states.length - 1; k > 0; k = element(parent, k)) calls.push(element(via, k));
        calls.reverse();
        return { steps: calls.length, calls };
      }
    }
  }
  return undefined;
}

/** Length of the optimal solution from `from` (memoised by state in `memo`). */
export function distance(w: World, from: State, memo: Map<string, number>): number | undefined {
  const key = stateKey(from);
  const known = memo.get(key);
  if (known !== undefined) return known;
  const sol = solve(w, from);
  if (sol === undefined) return undefined;
  // Every state along an optimal path is at the remaining distance.
  let s = from;
  memo.set(key, sol.steps);
  sol.calls.forEach((call, k) => {
    s = act(w, s, call, false).state;
    memo.set(stateKey(s), sol.steps - k - 1);
  });
  return sol.steps;
}
