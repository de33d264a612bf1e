// Named implementations of one formula family (veRL's core_algos registries, in our shape):
// plans and conformance vectors name a variant; the registry maps the name to one function.

export class Registry<F> {
  readonly #entries = new Map<string, F>();

  constructor(
    /** What the entries are, for error messages ("advantage estimator"). */
    readonly kind: string,
    entries: Readonly<Record<string, F>>,
  ) {
    for (const [name, fn] of Object.entries(entries)) this.register(name, fn);
  }

  register(name: string, fn: F): void {
    if (this.#entries.has(name)) throw new Error(`${this.kind} '${name}' is already registered`);
    this.#entries.set(name, fn);
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  get(name: string): F {
    const fn = this.#entries.get(name);
    if (fn === undefined) throw new RangeError(`unknown ${this.kind} '${name}' (known: ${this.names().join(", ")})`);
    return fn;
  }

  names(): string[] {
    return [...this.#entries.keys()];
  }
}
