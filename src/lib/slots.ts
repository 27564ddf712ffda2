/**
 * Named slots the composition root fills from the modules, so that the platform's types know no module:
 * - a hook is declared by the module that asks it, with the answer that holds while no module gives one;
 *   the module that knows the answer provides it (`answer(HOOK, fn)`), and code asks `hooks.get(HOOK)`;
 * - a module's state (its group commits, its caches) is declared by the module that owns it, built once per
 *   runtime from the platform's dependencies, and read back with `state.of(KEY)`.
 * Slots are told apart by identity, not by name: the name is for error messages.
 */

/** A question a module asks at request time, and its answer while no module gives one. */
export interface Hook<F> {
  readonly name: string
  readonly fallback: F
}

/** One module's answer to a hook. */
export interface HookAnswer {
  readonly hook: Hook<unknown>
  readonly fn: unknown
}

export function defineHook<F>(name: string, fallback: F): Hook<F> {
  return { name, fallback }
}

export function answer<F>(hook: Hook<F>, fn: F): HookAnswer {
  return { hook: hook as Hook<unknown>, fn }
}

/** The hooks of one runtime: each answered by at most one module, else its fallback. */
export class HookTable {
  private readonly answers = new Map<Hook<unknown>, unknown>()

  /** Joins the modules' answers; two modules answering one hook is a wiring error. */
  constructor(providers: readonly { name: string; hooks?: readonly HookAnswer[] }[]) {
    const owners = new Map<Hook<unknown>, string>()
    for (const provider of providers) {
      for (const { hook, fn } of provider.hooks ?? []) {
        const previous = owners.get(hook)
        if (previous !== undefined)
          throw new Error(`hook ${hook.name} is answered by both ${previous} and ${provider.name}`)
        owners.set(hook, provider.name)
        this.answers.set(hook, fn)
      }
    }
  }

  get<F>(hook: Hook<F>): F {
    return (this.answers.has(hook) ? this.answers.get(hook) : hook.fallback) as F
  }

  /** For tests: answers a hook with `fn` until the returned function is called. */
  replace<F>(hook: Hook<F>, fn: F): () => void {
    const had = this.answers.has(hook)
    const previous = this.answers.get(hook)
    this.answers.set(hook, fn)
    return () => {
      if (had) this.answers.set(hook, previous)
      else this.answers.delete(hook)
    }
  }
}

/** What one module keeps for the life of a runtime, and how it is built from the runtime's dependencies. */
export interface StateKey<T, D> {
  readonly name: string
  readonly create: (deps: D) => T
}

export function defineState<T, D>(name: string, create: (deps: D) => T): StateKey<T, D> {
  return { name, create }
}

/** The modules' states of one runtime, built once, in the order the modules are listed. */
export class StateTable<D> {
  private readonly states = new Map<StateKey<unknown, D>, unknown>()

  build(keys: readonly StateKey<unknown, D>[], deps: D): this {
    for (const key of keys) if (!this.states.has(key)) this.states.set(key, key.create(deps))
    return this
  }

  of<T>(key: StateKey<T, D>): T {
    if (!this.states.has(key as StateKey<unknown, D>))
      throw new Error(`state ${key.name} was not built: is its module listed?`)
    return this.states.get(key as StateKey<unknown, D>) as T
  }
}
