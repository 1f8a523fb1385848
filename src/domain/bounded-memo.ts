/**
 * A pure function's answers remembered by their input string, bounded: at most `maxEntries`
 * inputs of at most `maxKeyChars` each are kept (the table is emptied when full, so a flood of
 * made-up inputs costs memory no more than that, and only the function's own time); longer
 * inputs are computed every time. For inputs a service sees many times over (a pixel's origins,
 * its domains), where the function costs microseconds and a hit a hash lookup.
 */
export class BoundedMemo<V> {
  readonly #known = new Map<string, V>();
  readonly #compute: (input: string) => V;
  readonly #maxEntries: number;
  readonly #maxKeyChars: number;

  constructor(
    compute: (input: string) => V,
    options: { maxEntries?: number; maxKeyChars?: number } = {},
  ) {
    this.#compute = compute;
    this.#maxEntries = options.maxEntries ?? 2_000;
    this.#maxKeyChars = options.maxKeyChars ?? 256;
  }

  get(input: string): V {
    if (input.length > this.#maxKeyChars) return this.#compute(input);
    const known = this.#known.get(input);
    if (known !== undefined || this.#known.has(input)) return known as V;
    const value = this.#compute(input);
    if (this.#known.size >= this.#maxEntries) this.#known.clear();
    this.#known.set(input, value);
    return value;
  }

  /** Inputs held (for the bound's test). */
  get size(): number {
    return this.#known.size;
  }
}
