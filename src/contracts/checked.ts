// Checked accesses for indices and values that the surrounding code guarantees to exist.
//
// noUncheckedIndexedAccess types `items[i]` as `T | undefined`. Where the index is a real
// invariant (a loop bound, a length checked just above, a value the caller always sets) these
// accessors say so and throw an InternalError if the invariant is ever broken, instead of a
// non-null assertion (`items[i]!`), which lets an `undefined` flow on unseen. Where a value can
// legitimately be missing, handle the `undefined` instead of using these.

/** A broken invariant inside arl: a bug in arl, never a problem with the user's input. */
export class InternalError extends Error {
  override name = "InternalError";
}

/** `items[index]`, where `index` is known to be in range. */
export function at<T>(items: ArrayLike<T>, index: number): T {
  if (!Number.isInteger(index) || index < 0 || index >= items.length) {
    throw new InternalError(`index ${index} is out of range (length ${items.length})`);
  }
  return items[index] as T;
}

/** The last element of a list that is known to be non-empty. */
export function last<T>(items: ArrayLike<T>): T {
  if (items.length === 0) throw new InternalError("last element of an empty list");
  return items[items.length - 1] as T;
}

/** A value that is known to be neither undefined nor null; `what` names it in the error. */
export function defined<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new InternalError(`${what} is missing`);
  return value;
}
