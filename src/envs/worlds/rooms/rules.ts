// The game's rules and text: one function applies a tool call to a state and says what happened.
// The env instance and the solver both go through `act`, so a walkthrough is, by construction,
// a sequence of calls the game accepts. Observations never echo the player's own words: a name
// that is not one of the env's nouns is answered generically, so every observation stays inside
// the closed vocabulary (vocabulary.ts).
import type { ToolCall } from "../../../contracts/tool-calls.js";
import {
  CONTAINER_NOUNS,
  DIRECTIONS,
  INVENTORY,
  ITEM_NOUNS,
  KEY_NOUN,
  SUPPORTER_NOUNS,
  at,
  isOpen,
  isPortable,
  locOf,
  reachable,
  roomOf,
  thingOf,
  withLoc,
  withOpen,
  withPlayer,
  type Atom,
  type Direction,
  type State,
  type World,
} from "./world.js";

export interface ActResult {
  readonly state: State;
  readonly text: string;
  /** The game refused the action as impossible (counted in invalid_actions). */
  readonly invalid: boolean;
}

const KNOWN_NOUNS: ReadonlySet<string> = new Set<string>([
  ...ITEM_NOUNS,
  KEY_NOUN,
  ...CONTAINER_NOUNS,
  ...SUPPORTER_NOUNS,
]);

const article = (word: string): string => (/^[aeiou]/.test(word) ? "an" : "a");
const an = (word: string): string => `${article(word)} ${word}`;

/** "a", "a and b", "a, b and c". */
function listing(parts: readonly string[]): string {
  if (parts.length <= 1) return parts.join("");
  return `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}`;
}

/** An argument as the game reads it: lowercase words, without a leading article (or preposition, for put's target). */
function normalizeName(value: unknown, prepositions = false): string {
  if (typeof value !== "string" && typeof value !== "number") return "";
  const words = String(value)
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  const drop = new Set(
    prepositions ? ["the", "a", "an", "in", "into", "inside", "on", "onto", "to"] : ["the", "a", "an"],
  );
  while (words.length > 1 && drop.has(words[0] ?? "")) words.shift();
  return words.join(" ");
}

function findThing(w: World, name: string): number {
  return w.things.findIndex((t) => t.name === name);
}

/** Said when the named thing is not here: echoes the name only when it is one of the env's nouns. */
function notHere(name: string): string {
  return KNOWN_NOUNS.has(name) ? `You don't see the ${name} here.` : "You don't see that here.";
}

function preposition(w: World, target: number): string {
  return thingOf(w, target).kind === "supporter" ? "on" : "in";
}

function contents(w: World, s: State, receptacle: number): string[] {
  const code = w.rooms.length + receptacle;
  const out: string[] = [];
  w.things.forEach((t, i) => {
    if (isPortable(t) && locOf(s, i) === code) out.push(an(t.name));
  });
  return out;
}

function containerState(w: World, s: State, i: number): string {
  const t = thingOf(w, i);
  if (t.kind !== "container") return an(t.name);
  if (isOpen(w, s, i)) return `an open ${t.name}`;
  return t.key !== undefined ? `a locked ${t.name}` : `a closed ${t.name}`;
}

/** What the player sees in the current room. */
export function describeRoom(w: World, s: State): string {
  const here = at(s);
  const room = roomOf(w, here);
  const lines: string[] = [`You are in the ${room.name}.`];
  const seen: string[] = [];
  const details: string[] = [];
  w.things.forEach((t, i) => {
    if (t.kind === "container" || t.kind === "supporter") {
      if (t.room !== here) return;
      seen.push(containerState(w, s, i));
      if (!isOpen(w, s, i)) return;
      const inside = contents(w, s, i);
      if (t.kind === "supporter") {
        if (inside.length > 0) details.push(`On the ${t.name} you see ${listing(inside)}.`);
      } else
        details.push(inside.length > 0 ? `In the ${t.name} you see ${listing(inside)}.` : `The ${t.name} is empty.`);
    } else if (locOf(s, i) === here) seen.push(an(t.name));
  });
  lines.push(seen.length > 0 ? `You see ${listing(seen)}.` : "The room is empty.");
  lines.push(...details);
  const exits = DIRECTIONS.filter((d) => room.exits[d] !== undefined);
  lines.push(exits.length > 0 ? `Exits: ${exits.join(", ")}.` : "There are no exits.");
  return lines.join(" ");
}

function describeInventory(w: World, s: State): string {
  const carried = w.things.flatMap((t, i) => (locOf(s, i) === INVENTORY ? [an(t.name)] : []));
  return carried.length > 0 ? `You are carrying ${listing(carried)}.` : "You are carrying nothing.";
}

function atomText(w: World, a: Atom): string {
  switch (a.type) {
    case "in":
      return `put the ${thingOf(w, a.item).name} ${preposition(w, a.target)} the ${thingOf(w, a.target).name}`;
    case "holding":
      return `take the ${thingOf(w, a.item).name}`;
    case "open":
      return `open the ${thingOf(w, a.target).name}`;
  }
}

export function describeGoal(w: World): string {
  return `Your task: ${listing(w.goal.map((a) => atomText(w, a)))}.`;
}

const refuse = (s: State, text: string): ActResult => ({ state: s, text, invalid: true });
const done = (state: State, text: string): ActResult => ({ state, text, invalid: false });

/**
 * Applies one tool call. Never throws: a bad call is a refusal with a message. `describe: false`
 * (the solver) skips composing the room and container descriptions of successful moves and opens.
 */
export function act(w: World, s: State, call: ToolCall, describe = true): ActResult {
  const args = call.arguments ?? {};
  switch (call.name) {
    case "go": {
      const dir = normalizeName(args.direction);
      if (!(DIRECTIONS as readonly string[]).includes(dir))
        return refuse(s, "You can only go north, south, east or west.");
      const next = roomOf(w, at(s)).exits[dir as Direction];
      if (next === undefined) return refuse(s, `You can't go ${dir} from here.`);
      const moved = withPlayer(s, next);
      return done(moved, describe ? describeRoom(w, moved) : "");
    }
    case "take": {
      const name = normalizeName(args.object);
      if (name === "") return refuse(s, "Take what?");
      const i = findThing(w, name);
      if (i < 0) return refuse(s, notHere(name));
      const t = thingOf(w, i);
      if (!isPortable(t)) return refuse(s, t.room === at(s) ? `The ${name} is too heavy to carry.` : notHere(name));
      if (locOf(s, i) === INVENTORY) return refuse(s, `You already have the ${name}.`);
      if (!reachable(w, s, i)) return refuse(s, notHere(name));
      return done(withLoc(s, i, INVENTORY), `You take the ${name}.`);
    }
    case "open": {
      const name = normalizeName(args.target);
      if (name === "") return refuse(s, "Open what?");
      const i = findThing(w, name);
      if (i < 0) return refuse(s, notHere(name));
      const t = thingOf(w, i);
      const present = t.room === at(s) || locOf(s, i) === INVENTORY || (isPortable(t) && reachable(w, s, i));
      if (!present) return refuse(s, notHere(name));
      if (t.kind !== "container") return refuse(s, `You can't open the ${name}.`);
      if (isOpen(w, s, i)) return refuse(s, `The ${name} is already open.`);
      let text = `You open the ${name}.`;
      if (t.key !== undefined) {
        if (locOf(s, t.key) !== INVENTORY)
          return refuse(s, `The ${name} is locked. You need the ${thingOf(w, t.key).name}.`);
        text = `You unlock the ${name} with the ${thingOf(w, t.key).name} and open it.`;
      }
      const opened = withOpen(w, s, i);
      if (!describe) return done(opened, "");
      const inside = contents(w, opened, i);
      return done(
        opened,
        `${text} ${inside.length > 0 ? `In the ${name} you see ${listing(inside)}.` : "It is empty."}`,
      );
    }
    case "put": {
      const name = normalizeName(args.object);
      if (name === "") return refuse(s, "Put what?");
      const i = findThing(w, name);
      if (i < 0 || locOf(s, i) !== INVENTORY || !isPortable(thingOf(w, i))) {
        return refuse(s, KNOWN_NOUNS.has(name) ? `You are not carrying the ${name}.` : "You are not carrying that.");
      }
      const targetName = normalizeName(args.target, true);
      if (targetName === "") return refuse(s, `Put the ${name} where?`);
      const j = findThing(w, targetName);
      if (j < 0) return refuse(s, notHere(targetName));
      const t = thingOf(w, j);
      if (isPortable(t)) {
        return refuse(
          s,
          locOf(s, j) === INVENTORY || reachable(w, s, j)
            ? `You can't put things in the ${targetName}.`
            : notHere(targetName),
        );
      }
      if (t.room !== at(s)) return refuse(s, notHere(targetName));
      if (!isOpen(w, s, j)) return refuse(s, `The ${targetName} is closed.`);
      return done(withLoc(s, i, w.rooms.length + j), `You put the ${name} ${preposition(w, j)} the ${targetName}.`);
    }
    case "look":
      return done(s, describeRoom(w, s));
    case "inventory":
      return done(s, describeInventory(w, s));
    default:
      return refuse(s, "You can't do that. The actions are go, take, open, put, look and inventory.");
  }
}

/** Every fixed phrase `act` and the describers can produce (vocabulary.ts collects their words). */
export const PHRASES: readonly string[] = [
  "You are in the . You see a an . The room is empty. On the you see . In the you see . The is empty.",
  "Exits: , and . There are no exits. an open a locked a closed",
  "You are carrying . You are carrying nothing.",
  "Your task: put the in the on the take the open the , and .",
  "You can only go north, south, east or west. You can't go from here.",
  "Take what? You don't see the here. You don't see that here. The is too heavy to carry. You already have the . You take the .",
  "Open what? You can't open the . The is already open. You open the . The is locked. You need the .",
  "You unlock the with the and open it. In the you see . It is empty.",
  "Put what? You are not carrying the . You are not carrying that. Put the where? You can't put things in the . The is closed.",
  "You put the in the on the .",
  "You can't do that. The actions are go, take, open, put, look and inventory.",
  "Your task is done.",
];
