// What the current policy has already computed for token prefixes, so that a turn's prompt (the
// previous prompt + the generated turn + the observation) only runs its new tokens through the
// GRU: per position, the read-out's attention key; at the end of each cached prefix, the GRU
// state. A trie over token ids; cleared whenever the weights change (train_step, load) and on
// save, so a resumed run starts each iteration from the same (empty) cache as an uninterrupted one.
import { at } from "../../contracts/checked.js";

interface Node {
  readonly children: Map<number, Node>;
  key?: Float32Array;
  state?: Float32Array;
}

export interface CachedPrefix {
  readonly length: number;
  readonly state: Float32Array | undefined;
  /** Attention keys of positions 0..length-1. */
  readonly keys: Float32Array[];
}

export class PrefixCache {
  private root: Node = { children: new Map() };
  private nodes = 0;

  constructor(private readonly maxNodes = 1_000_000) {}

  clear(): void {
    this.root = { children: new Map() };
    this.nodes = 0;
  }

  get size(): number {
    return this.nodes;
  }

  /** The longest cached prefix of `ids` (length 0 when none). */
  lookup(ids: ArrayLike<number>): CachedPrefix {
    let node = this.root;
    const keys: Float32Array[] = [];
    let best: CachedPrefix = { length: 0, state: undefined, keys: [] };
    for (let k = 0; k < ids.length; k++) {
      const next = node.children.get(at(ids, k));
      if (!next || !next.key) break;
      node = next;
      keys.push(next.key);
      if (node.state) best = { length: k + 1, state: node.state, keys: keys.slice() };
    }
    return best;
  }

  /** Caches the state after `ids` and the keys of all its positions. */
  insert(ids: ArrayLike<number>, keys: readonly Float32Array[], state: Float32Array): void {
    if (ids.length === 0 || keys.length !== ids.length) return;
    if (this.nodes + ids.length > this.maxNodes) this.clear();
    let node = this.root;
    for (let k = 0; k < ids.length; k++) {
      const id = at(ids, k);
      let next = node.children.get(id);
      if (!next) {
        next = { children: new Map() };
        node.children.set(id, next);
        this.nodes++;
      }
      next.key ??= keys[k];
      node = next;
    }
    node.state = state;
  }
}
