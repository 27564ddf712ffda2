/** One page of a list, as the service answers it. */
export interface Page<T> {
  object: 'list'
  url: string
  data: T[]
  has_more: boolean
  next_cursor: string | null
}

/**
 * What `list()` answers: `for await (const x of svc.cards.list())` walks every page (following `next_cursor`);
 * `await svc.cards.list()` (or `.firstPage()`) is the first page alone; `.toArray({ limit })` collects.
 */
export class ListResult<T> implements AsyncIterable<T>, PromiseLike<Page<T>> {
  private first: Promise<Page<T>> | null = null

  constructor(
    private readonly fetchPage: (startingAfter: string | undefined) => Promise<Page<T>>,
  ) {}

  /** The first page, fetched once however often it is asked for. */
  firstPage(): Promise<Page<T>> {
    this.first ??= this.fetchPage(undefined)
    return this.first
  }

  then<A = Page<T>, B = never>(
    onFulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.firstPage().then(onFulfilled, onRejected)
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page = await this.firstPage()
    for (;;) {
      yield* page.data
      if (!page.has_more || !page.next_cursor) return
      page = await this.fetchPage(page.next_cursor)
    }
  }

  /** Every item across pages, stopping after `limit` (default 10,000, so a mistake cannot exhaust memory). */
  async toArray(options: { limit?: number } = {}): Promise<T[]> {
    const limit = options.limit ?? 10_000
    const items: T[] = []
    if (limit <= 0) return items
    for await (const item of this) {
      items.push(item)
      if (items.length >= limit) break
    }
    return items
  }
}
