// Recursive comparison of an op's output with the expected value under an absolute tolerance.

export interface Comparison {
  readonly ok: boolean;
  /** Largest |actual - expected| over the numbers; Infinity on a structural mismatch or NaN. */
  readonly maxAbsError: number;
  /** Where and how the shapes differ, when they do. */
  readonly mismatch?: string;
}

export function compareWithTolerance(expected: unknown, actual: unknown, tol: number): Comparison {
  let maxAbsError = 0;
  let mismatch: string | undefined;
  const fail = (where: string, why: string) => {
    mismatch ??= `${where === "" ? "" : `${where}: `}${why}`;
    maxAbsError = Infinity;
  };
  const walk = (e: unknown, a: unknown, where: string): void => {
    if (typeof e === "number") {
      if (typeof a !== "number") return fail(where, `expected a number, got ${describe(a)}`);
      const error = Math.abs(a - e);
      maxAbsError = Number.isNaN(error) ? Infinity : Math.max(maxAbsError, error);
      return;
    }
    if (Array.isArray(e)) {
      if (!Array.isArray(a)) return fail(where, `expected an array, got ${describe(a)}`);
      if (a.length !== e.length) return fail(where, `expected ${e.length} entries, got ${a.length}`);
      e.forEach((x, i) => walk(x, a[i], `${where}[${i}]`));
      return;
    }
    if (e !== null && typeof e === "object") {
      if (a === null || typeof a !== "object" || Array.isArray(a))
        return fail(where, `expected an object, got ${describe(a)}`);
      const ek = Object.keys(e).sort();
      const ak = Object.keys(a).sort();
      if (ek.join(",") !== ak.join(",")) return fail(where, `expected keys {${ek.join(", ")}}, got {${ak.join(", ")}}`);
      for (const key of ek)
        walk(
          (e as Record<string, unknown>)[key],
          (a as Record<string, unknown>)[key],
          where === "" ? key : `${where}.${key}`,
        );
      return;
    }
    if (e !== a) fail(where, `expected ${JSON.stringify(e)}, got ${describe(a)}`);
  };
  walk(expected, actual, "");
  return {
    ok: mismatch === undefined && maxAbsError <= tol,
    maxAbsError,
    ...(mismatch !== undefined ? { mismatch } : {}),
  };
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value === null) return "null";
  if (typeof value === "number") return String(value);
  return typeof value;
}
