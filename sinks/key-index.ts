/**
 * The fields of one kind of object by key, for walking many such objects. Records of one kind come
 * with their keys in one order, so the field found at each position of the object walked last is
 * kept: the next object's key there is compared with it (equal strings, most often the very same
 * one) rather than hashed and looked up again, for every field of every record.
 */
export class KeyIndex<T> {
  readonly #byKey: Map<string, T>;
  /** The keys of the object walked last, by position (undefined: forgotten), and what each found (undefined: nothing). */
  readonly #keys: Array<string | undefined> = [];
  readonly #found: Array<T | undefined> = [];

  constructor(entries: Iterable<readonly [string, T]> = []) {
    this.#byKey = new Map(entries);
  }

  /**
   * The field of `key`, the `at`-th key (counting from 0) of the object being walked. A key that
   * found nothing is remembered so too (records carry many fields that never get a column, such as
   * those only ever null); `set` forgets what was remembered, since the key may find a field now.
   */
  find(key: string, at: number): T | undefined {
    if (this.#keys[at] === key) return this.#found[at];
    const found = this.#byKey.get(key);
    this.#keys[at] = key;
    this.#found[at] = found;
    return found;
  }

  /** The field of `key`, wherever it stands. */
  get(key: string): T | undefined {
    return this.#byKey.get(key);
  }

  /** Every key and its field, in the order they were set. */
  entries(): IterableIterator<[string, T]> {
    return this.#byKey.entries();
  }

  set(key: string, value: T): void {
    this.#byKey.set(key, value);
    this.#keys.fill(undefined);
  }
}
