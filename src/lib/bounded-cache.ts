/**
 * A map that never holds more than `max` entries: the oldest goes first. For per-process caches, built
 * once per runtime as part of a module's state (`moduleState`), never as a module-level global.
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>()

  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    return this.entries.get(key)
  }

  set(key: K, value: V): void {
    if (!this.entries.has(key) && this.entries.size >= this.max)
      this.entries.delete(this.entries.keys().next().value as K)
    this.entries.set(key, value)
  }

  delete(key: K): void {
    this.entries.delete(key)
  }

  clear(): void {
    this.entries.clear()
  }
}
