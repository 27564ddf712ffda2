import { inspect } from 'node:util'

/** Wraps a secret so that logging, JSON and inspection print `[redacted]`; read it with `expose()` on purpose. */
export class Secret<T = string> {
  readonly #value: T
  constructor(value: T) {
    this.#value = value
  }
  expose(): T {
    return this.#value
  }
  toJSON(): string {
    return '[redacted]'
  }
  toString(): string {
    return '[redacted]'
  }
  [inspect.custom](): string {
    return 'Secret([redacted])'
  }
}
