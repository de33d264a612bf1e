// A request's stop strings over generated tokens (docs/gateway.md#exact-tokens-and-rewrites): the
// text is cut before the first stop string, and the tokens after the one that completes it are
// dropped, so that the kept ids are exactly the served text's. Apart from the session as the one
// place that maps text positions back to token ids.
import { withoutStop } from "../../episode/conversation.js";
import type { Policy } from "../../episode/policy.js";

/** The first stop string in `text` and where it starts; undefined when none occurs. */
export function firstStop(text: string, stops: readonly string[]): { stop: string; at: number } | undefined {
  let best: { stop: string; at: number } | undefined;
  for (const stop of stops) {
    const k = stop === "" ? -1 : text.indexOf(stop);
    if (k >= 0 && (best === undefined || k < best.at)) best = { stop, at: k };
  }
  return best;
}

/** How many leading ids it takes for the text to hold `stop`: the ids after that token are dropped. */
export async function completingToken(
  policy: Policy,
  stopIds: readonly number[],
  ids: Int32Array,
  stop: string,
): Promise<number> {
  let [lo, hi] = [1, ids.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((await policy.decode(withoutStop(ids.subarray(0, mid), stopIds))).includes(stop)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
