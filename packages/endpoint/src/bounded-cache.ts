/**
 * A Map that forgets its oldest entry once it holds `limit` entries, so a caller that builds urls
 * from unbounded input (e.g. ids interpolated into the route string) cannot grow memory forever.
 */
export class BoundedCache<V> {
  readonly #entries = new Map<string, V>();

  constructor(readonly limit: number) {}

  get(key: string): V | undefined {
    return this.#entries.get(key);
  }

  set(key: string, value: V): V {
    if (this.#entries.size >= this.limit) {
      this.#entries.delete(this.#entries.keys().next().value as string);
    }
    this.#entries.set(key, value);
    return value;
  }

  get size(): number {
    return this.#entries.size;
  }
}
