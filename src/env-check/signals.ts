// The env check's view of signals: every value the probe saw, by name and where it came from
// (a reset or step: state; the outcome), compared with the env's declarations: each declared
// signal reported with its type and range and what was seen of it, a value of the wrong type or
// outside the range named with where it was seen, an undeclared signal named (one whose values are
// all text is listed: no declaration can hold it).
import type { Signals } from "../contracts/env.js";
import type { SignalValue } from "../contracts/signals.js";
import type { PlanEnv } from "../plan/schema.js";

type Declared = PlanEnv["signals"];
type Declaration = Declared[string];

/** Where a value was seen: "reset", "step 3", "outcome", with the task and seed. */
export interface SignalSite {
  readonly task: number;
  readonly seed: number;
  readonly at: string;
}

interface Seen {
  readonly values: SignalValue[];
  readonly scopes: Set<"state" | "outcome">;
  firstSite: SignalSite;
}

export class SignalTally {
  private readonly seen = new Map<string, Seen>();
  private readonly problems = new Map<string, string>();

  constructor(private readonly declared: Declared) {}

  record(signals: Signals, scope: "state" | "outcome", site: SignalSite): void {
    for (const [name, value] of Object.entries(signals)) {
      let entry = this.seen.get(name);
      if (!entry) {
        entry = { values: [], scopes: new Set(), firstSite: site };
        this.seen.set(name, entry);
      }
      entry.values.push(value);
      entry.scopes.add(scope);
      const declaration = this.declared[name];
      const problem = declaration ? valueProblem(name, value, declaration) : undefined;
      // The first bad value of each signal is named; the rest would repeat it.
      if (problem && !this.problems.has(name))
        this.problems.set(name, `${problem} (task ${site.task}, seed ${site.seed}, ${site.at})`);
    }
  }

  /**
   * Undeclared signals whose every value is text: a signal is declared bool, number or count, so
   * no declaration can name them and no reward or condition can read them (an adapter's `status`,
   * an observation's text field). Listed, never a finding.
   */
  private textOnly(): string[] {
    return [...this.seen.entries()]
      .filter(([name, seen]) => !(name in this.declared) && seen.values.every((v) => typeof v === "string"))
      .map(([name]) => name)
      .sort();
  }

  /** One line per declared signal: its declaration and what the probe saw of it; then the text-only ones. */
  summaries(): string[] {
    const declared = Object.entries(this.declared)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(
        ([name, d]) =>
          `signal ${name} (${d.scope}, ${d.type}${rangeText(d)}): ${seenText(this.seen.get(name)?.values ?? [])}`,
      );
    const text = this.textOnly().map(
      (name) =>
        `signal ${name} (text, undeclared: no signal type holds text, so nothing reads it): ${seenText(this.seen.get(name)?.values ?? [])}`,
    );
    return [...declared, ...text];
  }

  /** What is wrong: bad values, declared signals never reported where their scope says, undeclared ones. */
  findings(): string[] {
    const out = [...this.problems.values()];
    for (const [name, d] of Object.entries(this.declared).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const seen = this.seen.get(name);
      if (!seen)
        out.push(
          `the declared ${d.scope} signal '${name}' was never reported (not after a reset, a step or the outcome)`,
        );
    }
    const text = new Set(this.textOnly());
    const undeclared = [...this.seen.keys()].filter((n) => !(n in this.declared) && !text.has(n)).sort();
    for (const name of undeclared) {
      const seen = this.seen.get(name);
      out.push(
        `the env reports the signal '${name}' (${seenText(seen?.values ?? [])}), which the spec does not declare; declare it under signals, or check the declared names (declared: ${Object.keys(this.declared).sort().join(", ") || "none"})`,
      );
    }
    return out;
  }
}

function rangeText(d: Declaration): string {
  if (d.type === "bool") return "";
  if (d.min === null && d.max === null) return d.type === "count" ? ", [0, inf)" : "";
  return `, [${d.min ?? "-inf"}, ${d.max ?? "inf"}]`;
}

/** Why `value` does not fit `d`, or undefined when it does. */
function valueProblem(name: string, value: SignalValue, d: Declaration): string | undefined {
  const shown = JSON.stringify(value);
  if (d.type === "bool")
    return typeof value === "boolean"
      ? undefined
      : `signal '${name}' = ${shown}, but it is declared bool (true or false)`;
  if (typeof value !== "number" || !Number.isFinite(value))
    return `signal '${name}' = ${shown}, but it is declared ${d.type} (a finite number)`;
  if (d.type === "count" && (!Number.isInteger(value) || value < 0))
    return `signal '${name}' = ${shown}, but it is declared count (a non-negative integer)`;
  if ((d.min !== null && value < d.min) || (d.max !== null && value > d.max))
    return `signal '${name}' = ${shown}, outside its declared range [${d.min ?? "-inf"}, ${d.max ?? "inf"}]`;
  return undefined;
}

function seenText(values: readonly SignalValue[]): string {
  if (values.length === 0) return "never seen";
  const numbers = values.filter((v): v is number => typeof v === "number");
  const others = [...new Set(values.filter((v) => typeof v !== "number").map((v) => JSON.stringify(v)))].sort();
  const parts: string[] = [];
  if (numbers.length > 0) {
    const low = Math.min(...numbers);
    const high = Math.max(...numbers);
    parts.push(low === high ? `${low}` : `${low} .. ${high}`);
  }
  if (others.length > 0) parts.push(others.slice(0, 6).join(", ") + (others.length > 6 ? ", ..." : ""));
  return `seen ${parts.join("; ")} (${values.length} value${values.length === 1 ? "" : "s"})`;
}
