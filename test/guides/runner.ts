/**
 * Runs a guide: the ```sh blocks of a Markdown file, in order, through the application, as a reader would
 * paste them into a terminal. It understands the small shell the guides are written in, and refuses
 * anything else (so a guide cannot drift into commands the check silently skips):
 *
 *   NAME=value                      literal, "double quoted" (with $VARS) or 'single quoted'
 *   NAME=$(pipeline)                the pipeline's output, trailing newlines removed (also inside "…")
 *   curl -s [-X M] [-H 'K: v'] [-d 'body'] URL [| jq [-r] [-c] 'filter']
 *   sleep N                         the time a worker needs: background jobs due by then run
 *   npx svc token                   an access token of the demo client
 *   echo words
 *
 * `$VAR` and `${VAR}` expand outside single quotes; a backslash at the end of a line continues it; `#` starts
 * a comment. A ```json or ```text block right after a ```sh block (nothing but blank lines between) is the
 * answer shown for that block's last command, and is compared with the real one (`mismatch`, `textMismatch`).
 */

export interface CodeBlock {
  lang: string
  text: string
  /** 1-based line of the opening fence. */
  line: number
  /** The answer block shown right after this one, if any. */
  answer?: CodeBlock
}

/** Fenced code blocks of a Markdown document, each sh block linked to the answer block that follows it. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split('\n')
  const blocks: CodeBlock[] = []
  let open: { lang: string; line: number; body: string[] } | null = null
  let blankSinceLast = true
  let lastEnd = -1
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (open) {
      if (/^```\s*$/.test(line)) {
        const block: CodeBlock = { lang: open.lang, text: open.body.join('\n'), line: open.line }
        const previous = blocks[blocks.length - 1]
        if (
          previous &&
          previous.lang === 'sh' &&
          lastEnd >= 0 &&
          blankSinceLast &&
          (block.lang === 'json' || block.lang === 'text')
        ) {
          previous.answer = block
        }
        blocks.push(block)
        open = null
        lastEnd = i
        blankSinceLast = true
      } else open.body.push(line)
      continue
    }
    const fence = /^```([A-Za-z0-9_-]*)\s*$/.exec(line)
    if (fence) {
      open = { lang: fence[1], line: i + 1, body: [] }
      continue
    }
    if (line.trim() !== '') blankSinceLast = false
  }
  if (open) throw new Error(`unclosed code block at line ${open.line}`)
  return blocks
}

// ---------------------------------------------------------------------------------------------------------
// The shell subset

type Part =
  | { kind: 'text'; value: string }
  | { kind: 'var'; name: string }
  | { kind: 'command'; source: string }
type Token = { kind: 'word'; parts: Part[]; raw: string } | { kind: 'pipe' }

/** Splits a script into statements: newlines end them, except inside quotes, `$(…)` or after a backslash. */
export function statements(script: string): string[] {
  const out: string[] = []
  let current = ''
  let quote: '"' | "'" | null = null
  let depth = 0
  for (let i = 0; i < script.length; i++) {
    const c = script[i]
    if (quote === "'") {
      current += c
      if (c === "'") quote = null
      continue
    }
    if (c === '\\' && script[i + 1] === '\n') {
      i++
      current += ' '
      continue
    }
    if (quote === '"') {
      current += c
      if (c === '\\') {
        current += script[++i] ?? ''
        continue
      }
      if (c === '"') quote = null
      continue
    }
    if (c === '\\') {
      current += c + (script[++i] ?? '')
      continue
    }
    if (c === "'" || c === '"') {
      quote = c
      current += c
      continue
    }
    if (c === '$' && script[i + 1] === '(') {
      depth++
      current += '$('
      i++
      continue
    }
    if (c === ')' && depth > 0) {
      depth--
      current += c
      continue
    }
    if (c === '#' && depth === 0 && (current === '' || /\s$/.test(current))) {
      while (i + 1 < script.length && script[i + 1] !== '\n') i++
      continue
    }
    if (c === '\n' && depth === 0) {
      if (current.trim()) out.push(current.trim())
      current = ''
      continue
    }
    current += c
  }
  if (quote || depth > 0) throw new Error(`unterminated quote or $( in: ${script}`)
  if (current.trim()) out.push(current.trim())
  return out
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/

/** Reads a `$NAME` or `${NAME}` at `i` (which points at `$`); answers the part and the index after it. */
function readVariable(source: string, i: number): [Part, number] {
  if (source[i + 1] === '{') {
    const end = source.indexOf('}', i)
    const name = source.slice(i + 2, end)
    if (end < 0 || !NAME.test(name) || NAME.exec(name)![0] !== name)
      throw new Error(`unsupported expansion in: ${source}`)
    return [{ kind: 'var', name }, end + 1]
  }
  const match = NAME.exec(source.slice(i + 1))
  if (!match) throw new Error(`a lone $ is not supported: ${source}`)
  return [{ kind: 'var', name: match[0] }, i + 1 + match[0].length]
}

/** Index of the `)` closing the `$(` whose `(` is at `open`. */
function closingParen(source: string, open: number): number {
  let depth = 0
  let quote: string | null = null
  for (let i = open; i < source.length; i++) {
    const c = source[i]
    if (quote) {
      if (c === '\\' && quote === '"') {
        i++
        continue
      }
      if (c === quote) quote = null
      continue
    }
    if (c === "'" || c === '"') quote = c
    else if (c === '(') depth++
    else if (c === ')' && --depth === 0) return i
  }
  throw new Error(`unclosed $( in: ${source}`)
}

export function tokenize(source: string): Token[] {
  const tokens: Token[] = []
  let parts: Part[] | null = null
  let start = 0
  const text = (value: string) => {
    parts ??= []
    const last = parts[parts.length - 1]
    if (last?.kind === 'text') last.value += value
    else parts.push({ kind: 'text', value })
  }
  const endWord = (i: number) => {
    if (parts) tokens.push({ kind: 'word', parts, raw: source.slice(start, i) })
    parts = null
  }
  for (let i = 0; i < source.length; ) {
    const c = source[i]
    if (/\s/.test(c)) {
      endWord(i)
      i++
      continue
    }
    if (!parts) start = i
    if (c === '|') {
      endWord(i)
      tokens.push({ kind: 'pipe' })
      i++
      continue
    }
    if (c === "'") {
      const end = source.indexOf("'", i + 1)
      if (end < 0) throw new Error(`unterminated ' in: ${source}`)
      text(source.slice(i + 1, end))
      i = end + 1
      continue
    }
    if (c === '"') {
      parts ??= []
      i++
      while (i < source.length && source[i] !== '"') {
        if (source[i] === '\\' && '"\\$`'.includes(source[i + 1])) {
          text(source[i + 1])
          i += 2
          continue
        }
        if (source[i] === '$' && source[i + 1] === '(') {
          const end = closingParen(source, i + 1)
          parts.push({ kind: 'command', source: source.slice(i + 2, end) })
          i = end + 1
          continue
        }
        if (source[i] === '$') {
          const [part, next] = readVariable(source, i)
          parts.push(part)
          i = next
          continue
        }
        if (source[i] === '`') throw new Error(`backquotes are not supported: ${source}`)
        text(source[i++])
      }
      if (source[i] !== '"') throw new Error(`unterminated " in: ${source}`)
      i++
      continue
    }
    if (c === '$' && source[i + 1] === '(') {
      const end = closingParen(source, i + 1)
      parts ??= []
      parts.push({ kind: 'command', source: source.slice(i + 2, end) })
      i = end + 1
      continue
    }
    if (c === '$') {
      const [part, next] = readVariable(source, i)
      parts ??= []
      parts.push(part)
      i = next
      continue
    }
    if (c === '\\') {
      text(source[i + 1] ?? '')
      i += 2
      continue
    }
    if (';&<>`(){}'.includes(c))
      throw new Error(`"${c}" is not part of the guides' shell: ${source}`)
    text(c)
    i++
  }
  endWord(source.length)
  return tokens
}

// ---------------------------------------------------------------------------------------------------------
// Running

export interface CurlRequest {
  method: string
  url: string
  headers: Record<string, string>
  body?: string
}

export interface CurlResponse {
  status: number
  body: string
}

export interface Host {
  curl(request: CurlRequest): Promise<CurlResponse>
  sleep(seconds: number): Promise<void>
  token(): Promise<string>
}

export interface StatementRun {
  statement: string
  /** The variable the statement sets, if any. */
  assigned?: { name: string; value: string }
  /** Every HTTP call the statement made, in order. */
  calls: { request: CurlRequest; response: CurlResponse }[]
  /** What the statement printed (empty for an assignment). */
  output: string
}

export class GuideShell {
  readonly vars = new Map<string, string>()

  constructor(private readonly host: Host) {}

  async run(statement: string): Promise<StatementRun> {
    const run: StatementRun = { statement, calls: [], output: '' }
    const tokens = tokenize(statement)
    const first = tokens[0]
    if (
      first?.kind === 'word' &&
      first.parts[0]?.kind === 'text' &&
      /^[A-Za-z_][A-Za-z0-9_]*=/.test(first.parts[0].value)
    ) {
      if (tokens.length !== 1)
        throw new Error(`an assignment stands alone in the guides: ${statement}`)
      const head = first.parts[0].value
      const eq = head.indexOf('=')
      const name = head.slice(0, eq)
      const valueParts: Part[] = [
        { kind: 'text', value: head.slice(eq + 1) },
        ...first.parts.slice(1),
      ]
      const value = await this.expand(valueParts, run)
      this.vars.set(name, value)
      run.assigned = { name, value }
      return run
    }
    run.output = await this.pipeline(tokens, run)
    return run
  }

  private async expand(parts: Part[], run: StatementRun): Promise<string> {
    let out = ''
    for (const part of parts) {
      if (part.kind === 'text') out += part.value
      else if (part.kind === 'var') {
        const value = this.vars.get(part.name)
        if (value === undefined) throw new Error(`$${part.name} is used before the guide sets it`)
        out += value
      } else out += (await this.pipeline(tokenize(part.source), run)).replace(/\n+$/, '')
    }
    return out
  }

  private async pipeline(tokens: Token[], run: StatementRun): Promise<string> {
    const commands: string[][] = [[]]
    for (const token of tokens) {
      if (token.kind === 'pipe') commands.push([])
      else commands[commands.length - 1].push(await this.expand(token.parts, run))
    }
    if (commands.some((c) => c.length === 0))
      throw new Error(`empty command in a pipeline: ${tokens.length} tokens`)
    let stdin = ''
    for (const argv of commands) stdin = await this.command(argv, stdin, run)
    return stdin
  }

  private async command(argv: string[], stdin: string, run: StatementRun): Promise<string> {
    const [name, ...args] = argv
    switch (name) {
      case 'curl': {
        const request = parseCurl(args)
        const response = await this.host.curl(request)
        run.calls.push({ request, response })
        return response.body
      }
      case 'jq':
        return runJq(args, stdin)
      case 'sleep': {
        if (args.length !== 1 || !/^\d+(\.\d+)?$/.test(args[0]))
          throw new Error(`sleep takes a number of seconds: ${argv.join(' ')}`)
        await this.host.sleep(Number(args[0]))
        return ''
      }
      case 'npx':
        if (args.join(' ') === 'svc token') return `${await this.host.token()}\n`
        throw new Error(`only \`npx svc token\` is supported, not: ${argv.join(' ')}`)
      case 'echo':
        return `${args.join(' ')}\n`
      default:
        throw new Error(
          `"${name}" is not one of the commands the guides use (curl, jq, sleep, npx svc token, echo)`,
        )
    }
  }
}

export function parseCurl(args: string[]): CurlRequest {
  let method: string | undefined
  let url: string | undefined
  let body: string | undefined
  const headers: Record<string, string> = {}
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (a === '-s' || a === '-sS' || a === '--silent' || a === '-S') continue
    if (a === '-X' || a === '--request') {
      method = args[++i]
      continue
    }
    if (a === '-H' || a === '--header') {
      const h = args[++i] ?? ''
      const colon = h.indexOf(':')
      if (colon < 1) throw new Error(`malformed header: ${h}`)
      headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim()
      continue
    }
    if (a === '-d' || a === '--data' || a === '--data-raw') {
      if (body !== undefined) throw new Error('one -d per curl')
      body = args[++i]
      if (body?.startsWith('@') && a !== '--data-raw') throw new Error('-d @file is not supported')
      continue
    }
    if (a.startsWith('-')) throw new Error(`curl option ${a} is not supported by the guide check`)
    if (url !== undefined) throw new Error(`two URLs in one curl: ${url} and ${a}`)
    url = a
  }
  if (!url) throw new Error(`curl without a URL: ${args.join(' ')}`)
  return {
    method: method ?? (body !== undefined ? 'POST' : 'GET'),
    url,
    headers,
    ...(body !== undefined ? { body } : {}),
  }
}

// ---------------------------------------------------------------------------------------------------------
// jq, the part of it the guides use: paths (.a.b, .a[0], .a[], .[]), select(path == literal) and !=,
// object construction {a, b: .c}, length, and pipes between them.

type JqStep = (input: unknown) => unknown[]

export function runJq(args: string[], stdin: string): string {
  let raw = false
  let compact = false
  let filter: string | undefined
  for (const a of args) {
    if (a === '-r') raw = true
    else if (a === '-c') compact = true
    else if (a === '-rc' || a === '-cr') {
      raw = true
      compact = true
    } else if (a.startsWith('-'))
      throw new Error(`jq option ${a} is not supported by the guide check`)
    else if (filter === undefined) filter = a
    else throw new Error(`jq reads its input from the pipe in the guides, not from ${a}`)
  }
  if (filter === undefined) throw new Error('jq needs a filter')
  let input: unknown
  try {
    input = JSON.parse(stdin)
  } catch {
    throw new Error(`jq input is not JSON: ${stdin.slice(0, 200)}`)
  }
  const outputs = compileJq(filter)(input)
  return outputs
    .map((v) => `${raw && typeof v === 'string' ? v : JSON.stringify(v, null, compact ? 0 : 2)}\n`)
    .join('')
}

function splitTopLevel(source: string, separator: string): string[] {
  const out: string[] = []
  let depth = 0
  let quote = false
  let current = ''
  for (let i = 0; i < source.length; i++) {
    const c = source[i]
    if (quote) {
      current += c
      if (c === '\\') current += source[++i]
      else if (c === '"') quote = false
      continue
    }
    if (c === '"') quote = true
    else if ('([{'.includes(c)) depth++
    else if (')]}'.includes(c)) depth--
    if (depth === 0 && source.startsWith(separator, i)) {
      out.push(current)
      current = ''
      i += separator.length - 1
      continue
    }
    current += c
  }
  out.push(current)
  return out.map((s) => s.trim())
}

export function compileJq(filter: string): JqStep {
  const stages = splitTopLevel(filter, '|').map(compileTerm)
  return (input) => stages.reduce<unknown[]>((values, stage) => values.flatMap(stage), [input])
}

function compileTerm(term: string): JqStep {
  if (term === 'length') {
    return (v) => [
      Array.isArray(v) || typeof v === 'string'
        ? v.length
        : v && typeof v === 'object'
          ? Object.keys(v).length
          : 0,
    ]
  }
  const select = /^select\((.*)\)$/.exec(term)
  if (select) {
    const cond = /^(\.[^=!]*?)\s*(==|!=)\s*(.+)$/.exec(select[1].trim())
    if (!cond) throw new Error(`jq: unsupported select(${select[1]})`)
    const path = compilePath(cond[1].trim())
    const literal = JSON.parse(cond[3].trim()) as unknown
    const equal = cond[2] === '=='
    return (v) => (path(v).some((x) => (x === literal) === equal) ? [v] : [])
  }
  if (term.startsWith('{') && term.endsWith('}')) {
    const fields = splitTopLevel(term.slice(1, -1), ',').map((f) => {
      const [key, path] = splitTopLevel(f, ':')
      if (!NAME.test(key) || NAME.exec(key)![0] !== key)
        throw new Error(`jq: unsupported object key ${key}`)
      return { key, get: compilePath(path ?? `.${key}`) }
    })
    return (v) => [Object.fromEntries(fields.map(({ key, get }) => [key, get(v)[0] ?? null]))]
  }
  return compilePath(term)
}

function compilePath(path: string): JqStep {
  if (!path.startsWith('.')) throw new Error(`jq: unsupported filter ${path}`)
  const steps: ({ key: string } | { index: number } | { each: true })[] = []
  let rest = path.slice(1)
  while (rest.length > 0) {
    const key = /^\.?([A-Za-z_][A-Za-z0-9_]*)/.exec(rest)
    if (key && (steps.length === 0 || rest.startsWith('.'))) {
      steps.push({ key: key[1] })
      rest = rest.slice(key[0].length)
      continue
    }
    const bracket = /^\.?\[(\d*)\]/.exec(rest)
    if (bracket) {
      steps.push(bracket[1] === '' ? { each: true } : { index: Number(bracket[1]) })
      rest = rest.slice(bracket[0].length)
      continue
    }
    throw new Error(`jq: unsupported path ${path}`)
  }
  return (input) =>
    steps.reduce<unknown[]>(
      (values, step) =>
        values.flatMap((v) => {
          if ('key' in step)
            return [
              v && typeof v === 'object' && !Array.isArray(v)
                ? ((v as Record<string, unknown>)[step.key] ?? null)
                : null,
            ]
          if ('index' in step) return [Array.isArray(v) ? (v[step.index] ?? null) : null]
          if (Array.isArray(v)) return v
          if (v && typeof v === 'object') return Object.values(v)
          throw new Error(`jq: cannot iterate over ${JSON.stringify(v)}`)
        }),
      [input],
    )
}

// ---------------------------------------------------------------------------------------------------------
// Answers

/**
 * Whether an answer shown in a guide agrees with the real one: every field shown is there with the value
 * shown (fields left out are the abridging); `…` in a shown string stands for any text; an array is shown
 * whole, or as its first items followed by a last item "…".
 */
export function mismatch(shown: unknown, actual: unknown, path = '$'): string | null {
  if (typeof shown === 'string' && shown.includes('…')) {
    if (typeof actual !== 'string')
      return `${path}: shown "${shown}", got ${JSON.stringify(actual)}`
    const pattern = new RegExp(
      `^${shown
        .split('…')
        .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('[\\s\\S]*')}$`,
    )
    return pattern.test(actual) ? null : `${path}: shown "${shown}", got ${JSON.stringify(actual)}`
  }
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) return `${path}: shown an array, got ${JSON.stringify(actual)}`
    const open = shown.length > 0 && shown[shown.length - 1] === '…'
    const items = open ? shown.slice(0, -1) : shown
    if (open ? actual.length < items.length : actual.length !== items.length) {
      return `${path}: shown ${items.length}${open ? ' or more' : ''} items, got ${actual.length}: ${JSON.stringify(actual).slice(0, 300)}`
    }
    for (let i = 0; i < items.length; i++) {
      const m = mismatch(items[i], actual[i], `${path}[${i}]`)
      if (m) return m
    }
    return null
  }
  if (shown && typeof shown === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual))
      return `${path}: shown an object, got ${JSON.stringify(actual)}`
    for (const [key, value] of Object.entries(shown)) {
      if (!(key in actual)) return `${path}.${key}: shown, but not in the answer`
      const m = mismatch(value, (actual as Record<string, unknown>)[key], `${path}.${key}`)
      if (m) return m
    }
    return null
  }
  return Object.is(shown, actual)
    ? null
    : `${path}: shown ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`
}

/** Compares a shown text answer line by line (`…` within a line is any text; a last line `…` is any further lines). */
export function textMismatch(shown: string, actual: string): string | null {
  const shownLines = shown.replace(/\n+$/, '').split('\n')
  const actualLines = actual.replace(/\n+$/, '').split('\n')
  const open = shownLines[shownLines.length - 1] === '…'
  const lines = open ? shownLines.slice(0, -1) : shownLines
  if (open ? actualLines.length < lines.length : actualLines.length !== lines.length) {
    return `shown ${lines.length}${open ? ' or more' : ''} lines, got ${actualLines.length}:\n${actual}`
  }
  for (let i = 0; i < lines.length; i++) {
    const m = mismatch(lines[i], actualLines[i], `line ${i + 1}`)
    if (m) return `${m}\n${actual}`
  }
  return null
}
