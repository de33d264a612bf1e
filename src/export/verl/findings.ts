// What the veRL export says about each ARL setting it could not carry over as it is: the
// lines of SEMANTICS.md, and the list `arl export verl` refuses on.

/**
 * exact: the veRL setting means the same (listed only where a reader would doubt it);
 * differs: mapped, but veRL's arithmetic differs in the way described (a warning);
 * refused: no veRL setting means this; the export stops unless --allow-approximate.
 */
export type Handling = "exact" | "differs" | "refused";

export interface Finding {
  /** The plan's dotted path. */
  readonly setting: string;
  /** The plan's value, as written in the report. */
  readonly arl: string;
  /** What veRL does with the exported configuration. */
  readonly verl: string;
  /** The numeric (or behavioural) consequence of the difference. */
  readonly consequence: string;
  readonly handling: Handling;
}

export function refusals(findings: readonly Finding[]): Finding[] {
  return findings.filter((f) => f.handling === "refused");
}

/** A plan value as the report shows it. */
export function shown(value: unknown): string {
  return JSON.stringify(value) ?? "undefined";
}
