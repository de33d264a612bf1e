// What `arl explain` says of a diagnostic code the compiler reports outside the lint rules.

export interface CodeExplanation {
  /** The stage that reports it. */
  readonly stage: string;
  /** One line, for the list. */
  readonly title: string;
  /** What triggers it and what to do about it. */
  readonly explanation: string;
}
