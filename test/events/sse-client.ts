/** A server-sent events client for the stream tests: `GET /v1/events/stream` read as a client reads it (fetch). */

export interface Message {
  id?: string
  event?: string
  data?: string
  comment?: string
}

/** An open stream: every message and comment received, and a way to wait for some. */
export interface Opened {
  status: number
  headers: Headers
  body: any
  messages: Message[]
  /** Resolves when the server has ended the body (or the connection); `at` is when, in ms since the epoch. */
  ended: Promise<{ at: number }>
  waitFor(predicate: (m: Message[]) => boolean, timeoutMs?: number): Promise<Message[]>
  close(): void
}

/** Opens the stream with `token`; a refusal is read into `body`, a stream is read in the background into `messages`. */
export async function openStream(
  baseUrl: string,
  token: string,
  query = '',
  headers: Record<string, string> = {},
): Promise<Opened> {
  const controller = new AbortController()
  const res = await fetch(`${baseUrl}/v1/events/stream${query}`, {
    headers: { authorization: `Bearer ${token}`, ...headers },
    signal: controller.signal,
  })
  const messages: Message[] = []
  let markEnded: (value: { at: number }) => void = () => {}
  const opened: Opened = {
    status: res.status,
    headers: res.headers,
    body: null,
    messages,
    ended: new Promise((resolve) => {
      markEnded = resolve
    }),
    async waitFor(predicate, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs
      while (!predicate(messages)) {
        if (Date.now() > until)
          throw new Error(`stream: condition not met; got ${JSON.stringify(messages)}`)
        await new Promise((r) => setTimeout(r, 20))
      }
      return messages
    },
    close: () => controller.abort(),
  }
  if (!res.ok) {
    opened.body = await res.json()
    markEnded({ at: Date.now() })
    return opened
  }
  void (async () => {
    const decoder = new TextDecoder()
    let buffer = ''
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true })
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          messages.push(parseMessage(buffer.slice(0, end)))
          buffer = buffer.slice(end + 2)
        }
      }
    } catch {
      /* aborted, or the connection was cut */
    }
    markEnded({ at: Date.now() })
  })()
  return opened
}

/** One message block (the lines before a blank line). */
export function parseMessage(block: string): Message {
  const m: Message = {}
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) m.comment = line.slice(1).trim()
    else if (line.startsWith('id: ')) m.id = line.slice(4)
    else if (line.startsWith('event: ')) m.event = line.slice(7)
    else if (line.startsWith('data: ')) m.data = line.slice(6)
  }
  return m
}

/** The messages that are events (they carry data). */
export const events = (messages: Message[]): Message[] => messages.filter((m) => m.data)
