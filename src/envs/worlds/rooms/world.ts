// The world model of the rooms env: a static part (rooms, exits, things, the quest) and a small
// mutable state (where the player is, where each portable thing is, which containers are open).
//
// Naming (why every object name is ONE word): with the text_action format the harness fills a
// tool's parameters in order and the last one takes the rest of the line, so `put` needs its
// object to be a single word ("put coin wooden chest" would still parse, but "put red key chest"
// would not). Every thing in a world is therefore named by one lowercase noun that is unique
// within that world (at most one coin, one chest, ...), and observations use exactly that noun.
// There is at most one key (named "key") per world, so at most one container is locked. Colors
// only appear in room names of worlds with more rooms than the room-noun pool ("the red attic");
// rooms never appear in actions (`go` takes a direction).

import { at as element } from "../../../contracts/checked.js";

export const DIRECTIONS = ["north", "south", "east", "west"] as const;
export type Direction = (typeof DIRECTIONS)[number];
export const OPPOSITE: Record<Direction, Direction> = { north: "south", south: "north", east: "west", west: "east" };
/** Grid offsets: north is y - 1, east is x + 1. */
export const OFFSET: Record<Direction, readonly [number, number]> = {
  north: [0, -1],
  south: [0, 1],
  east: [1, 0],
  west: [-1, 0],
};

export const ROOM_NOUNS = [
  "kitchen",
  "bedroom",
  "hallway",
  "garden",
  "cellar",
  "attic",
  "study",
  "pantry",
  "library",
  "bathroom",
  "garage",
  "porch",
  "office",
  "workshop",
  "nursery",
  "lounge",
  "parlor",
  "laundry",
  "chapel",
  "gallery",
  "balcony",
  "basement",
  "foyer",
  "closet",
] as const;
export const COLORS = ["red", "blue", "green", "yellow", "white", "black", "brown", "gray"] as const;
export const ITEM_NOUNS = [
  "coin",
  "apple",
  "book",
  "lamp",
  "ring",
  "cup",
  "gem",
  "map",
  "pen",
  "ball",
  "hat",
  "sock",
  "spoon",
  "candle",
  "bottle",
  "shoe",
  "watch",
  "comb",
  "bell",
  "flute",
] as const;
export const CONTAINER_NOUNS = ["chest", "box", "crate", "cabinet", "trunk", "basket", "locker", "wardrobe"] as const;
export const SUPPORTER_NOUNS = ["table", "shelf", "counter", "desk", "bench", "stool"] as const;
export const KEY_NOUN = "key";

export const MAX_OBJECTS = ITEM_NOUNS.length + 1 + CONTAINER_NOUNS.length + SUPPORTER_NOUNS.length;
export const MAX_ROOMS = ROOM_NOUNS.length * COLORS.length;

export type ThingKind = "item" | "key" | "container" | "supporter";

export interface Thing {
  readonly name: string;
  readonly kind: ThingKind;
  /** Room of a container or supporter (they never move); -1 for portable things. */
  readonly room: number;
  /** For a locked container: the index of the key thing that opens it. */
  readonly key?: number;
}

export interface Room {
  readonly name: string;
  readonly exits: Readonly<Partial<Record<Direction, number>>>;
}

/** One conjunct of the quest's goal. */
export type Atom =
  | { readonly type: "in"; readonly item: number; readonly target: number }
  | { readonly type: "holding"; readonly item: number }
  | { readonly type: "open"; readonly target: number };

/**
 * State, packed in one Int16Array of length 1 + 2T (T things):
 * [0] the player's room; [1 + i] where thing i is (portable things: a room's floor 0..R-1,
 * on/in receptacle j as R + j, carried as INVENTORY; receptacles: their room);
 * [1 + T + i] 1 when thing i is open (supporters always are; portable things: 0).
 * Containers never close again (there is no close action), so a locked container is a closed
 * one with a key, and stays unlocked once opened.
 */
export type State = Int16Array;
export const INVENTORY = -1;

export interface World {
  readonly rooms: readonly Room[];
  readonly things: readonly Thing[];
  readonly start: State;
  readonly goal: readonly Atom[];
  /** The solver's optimal number of steps from the start (quest_length unless the world is too small; see generate.ts). */
  readonly optimal: number;
}

export const at = (s: State): number => element(s, 0);
export const locOf = (s: State, i: number): number => element(s, 1 + i);
/** Thing `i` and room `r` of the world, for indices that come from the world itself (a state slot, an atom, a key). */
export const thingOf = (w: World, i: number): Thing => element(w.things, i);
export const roomOf = (w: World, r: number): Room => element(w.rooms, r);
export const isOpen = (w: World, s: State, i: number): boolean => s[1 + w.things.length + i] === 1;

export function withPlayer(s: State, room: number): State {
  const n = s.slice();
  n[0] = room;
  return n;
}
export function withLoc(s: State, i: number, loc: number): State {
  const n = s.slice();
  n[1 + i] = loc;
  return n;
}
export function withOpen(w: World, s: State, i: number): State {
  const n = s.slice();
  n[1 + w.things.length + i] = 1;
  return n;
}

export const isPortable = (t: Thing): boolean => t.kind === "item" || t.kind === "key";

/** A portable thing the player can see and reach: on the floor here, or on/in an open receptacle here. */
export function reachable(w: World, s: State, i: number): boolean {
  const loc = locOf(s, i);
  if (loc === INVENTORY) return false;
  if (loc < w.rooms.length) return loc === at(s);
  const j = loc - w.rooms.length;
  return thingOf(w, j).room === at(s) && isOpen(w, s, j);
}

function atomHolds(w: World, s: State, a: Atom): boolean {
  switch (a.type) {
    case "in":
      return locOf(s, a.item) === w.rooms.length + a.target;
    case "holding":
      return locOf(s, a.item) === INVENTORY;
    case "open":
      return isOpen(w, s, a.target);
  }
}

export function goalHolds(w: World, s: State, goal: readonly Atom[] = w.goal): boolean {
  return goal.every((a) => atomHolds(w, s, a));
}

/** A string naming a state exactly (for hash sets). */
export function stateKey(s: State): string {
  let key = "";
  for (const slot of s) key += String.fromCharCode(slot + 2);
  return key;
}
