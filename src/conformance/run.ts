// Runs parsed vector files against a backend (the reference for ops the backend lacks).
import { referenceBackend, type ConformanceBackend } from "./backend.js";
import { compareWithTolerance } from "./compare.js";
import type { VectorCase, VectorFile } from "./vectors.js";

export interface CaseResult {
  readonly file: string;
  readonly case: VectorCase;
  /** The backend that computed the value. */
  readonly backend: string;
  readonly passed: boolean;
  readonly actual?: unknown;
  readonly maxAbsError: number;
  readonly mismatch?: string;
  /** The evaluation threw: its message. */
  readonly error?: string;
}

async function runCase(
  file: string,
  c: VectorCase,
  backend: ConformanceBackend = referenceBackend,
): Promise<CaseResult> {
  const chosen = backend.supports(c.op) ? backend : referenceBackend;
  let actual: unknown;
  try {
    actual = await chosen.evaluate(c.op, c.input);
  } catch (error) {
    return {
      file,
      case: c,
      backend: chosen.name,
      passed: false,
      maxAbsError: Infinity,
      error: error instanceof Error ? error.message : String(error),
    };
  }
  const comparison = compareWithTolerance(c.expected, actual, c.tol);
  return {
    file,
    case: c,
    backend: chosen.name,
    passed: comparison.ok,
    actual,
    maxAbsError: comparison.maxAbsError,
    ...(comparison.mismatch !== undefined ? { mismatch: comparison.mismatch } : {}),
  };
}

export async function runVectors(
  files: readonly VectorFile[],
  backend: ConformanceBackend = referenceBackend,
): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const f of files) for (const c of f.cases) results.push(await runCase(f.file, c, backend));
  return results;
}

/** One line for a failing case: where, what, expected vs actual, the error. */
export function describeFailure(r: CaseResult): string {
  const head = `${r.file}: case '${r.case.name}' (${r.case.op})`;
  if (r.error !== undefined) return `${head}: error from ${r.backend}: ${r.error}`;
  const detail =
    r.mismatch !== undefined
      ? `shape mismatch: ${r.mismatch}`
      : `max abs error ${formatError(r.maxAbsError)} (tol ${r.case.tol})`;
  return `${head}: expected ${formatValue(r.case.expected)}, got ${formatValue(r.actual)}; ${detail}`;
}

function formatError(e: number): string {
  return Number.isFinite(e) ? e.toExponential(3) : String(e);
}

// JSON, but NaN and infinities stay visible instead of becoming null.
function formatValue(value: unknown): string {
  return (
    JSON.stringify(value, (_, v: unknown) => (typeof v === "number" && !Number.isFinite(v) ? String(v) : v)) ??
    String(value)
  );
}
