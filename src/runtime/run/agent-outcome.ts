// An agent program's outcome (docs/gateway.md#agent-programs): `{"signals": {...}}`, POSTed to
// its session or printed as its last stdout line, checked against the env's declared signals
// before any reward reads it. A bad outcome is the program's fault (an env error with the
// reason), never a reward of 0 that would look like a policy failure.
import type { Signals } from "../../contracts/env.js";
import type { PlanEnv } from "../../plan/schema.js";

type DeclaredSignals = PlanEnv["signals"];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The last stdout line as an outcome body, or why it is not one. */
export function parseOutcomeLine(line: string): { body: unknown } | { error: string } {
  if (line.trim() === "")
    return {
      error:
        'printed no outcome (its last stdout line must be {"signals": {...}}, or it POSTs that to ARL_OUTCOME_URL)',
    };
  try {
    return { body: JSON.parse(line) as unknown };
  } catch {
    const shown = line.length > 120 ? `${line.slice(0, 120)}...` : line;
    return {
      error: `printed no outcome: its last stdout line is not JSON (${JSON.stringify(shown)}); print {"signals": {...}} last, or POST it to ARL_OUTCOME_URL`,
    };
  }
}

/** The outcome's signals, checked against the declared ones; a string says what is wrong. */
export function checkOutcome(body: unknown, declared: DeclaredSignals): Signals | string {
  if (!isObject(body) || !isObject(body.signals))
    return 'reported an outcome without a "signals" object (the shape is {"signals": {"name": value, ...}})';
  const out: Record<string, boolean | number> = {};
  for (const [name, value] of Object.entries(body.signals)) {
    const signal = declared[name];
    if (!signal)
      return `reported the signal '${name}', which the env does not declare (declared: ${Object.keys(declared).sort().join(", ") || "none"})`;
    const wrong = (what: string) =>
      `reported ${name} = ${JSON.stringify(value)}, but '${name}' is declared ${signal.type}: ${what}`;
    if (signal.type === "bool") {
      if (typeof value !== "boolean") return wrong("report true or false");
    } else if (typeof value !== "number" || !Number.isFinite(value)) return wrong("report a finite number");
    else if (signal.type === "count" && (!Number.isInteger(value) || value < 0))
      return wrong("report a non-negative integer");
    else if ((signal.min !== null && value < signal.min) || (signal.max !== null && value > signal.max))
      return `reported ${name} = ${value}, outside its declared range [${signal.min ?? "-inf"}, ${signal.max ?? "inf"}]`;
    out[name] = value;
  }
  const missing = Object.keys(declared)
    .filter((n) => declared[n]?.scope === "outcome" && !(n in out))
    .sort();
  if (missing.length > 0)
    return `reported no value for the outcome signal${missing.length === 1 ? "" : "s"} ${missing.map((n) => `'${n}'`).join(", ")}`;
  return out;
}

/** Outcome signals of an episode a budget ended before the program reported: false and 0. */
export function zeroOutcome(declared: DeclaredSignals): Signals {
  return Object.fromEntries(Object.entries(declared).map(([n, s]) => [n, s.type === "bool" ? false : 0]));
}
