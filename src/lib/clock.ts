/** The service's notion of "now"; tests move it to exercise expiry without sleeping. */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock tests can advance by hand. */
export class ManualClock implements Clock {
  private offsetMs = 0
  now(): Date {
    return new Date(Date.now() + this.offsetMs)
  }
  advance(ms: number): void {
    this.offsetMs += ms
  }
  reset(): void {
    this.offsetMs = 0
  }
}

/** A clock that always reads `at`: a sandbox clock's time for the objects under it. */
export function frozenClock(at: Date): Clock {
  const time = at.getTime()
  return { now: () => new Date(time) }
}
