import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url))

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

test("npm start on an empty data folder says it is preparing the database first, then prints the banner (with the demo owner's console link) and writes the sandbox client", {
  timeout: 90_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-first-run-'))
  const port = await freePort()
  const env = { PATH: process.env.PATH, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'silent' }
  const child = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stderr.on('data', (d) => {
    err += d
  })
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no banner within 80 s; stdout: ${out}; stderr: ${err}`)),
        80_000,
      )
      child.stdout.on('data', (d) => {
        out += d
        if (out.includes('First call')) {
          clearTimeout(timer)
          resolve()
        }
      })
      child.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`exited ${code}; stdout: ${out}; stderr: ${err}`))
      })
    })
    const first = out.split('\n').find((l) => l.trim() !== '')
    assert.equal(first, `svc: opening the embedded database in ${dataDir} and applying migrations…`)
    assert.ok(out.indexOf('applying migrations') < out.indexOf('svc is listening on'))
    const clientFile = join(dataDir, 'sandbox-client.json')
    assert.ok(existsSync(clientFile))
    assert.equal(
      JSON.parse(readFileSync(clientFile, 'utf8')).token_url,
      `http://localhost:${port}/oauth/token`,
    )
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
    assert.equal(ready.status, 200)
    // The banner's one-time console link for the demo owner opens the page that sets the password.
    assert.match(out, /console: set the password of the demo owner owner@demo\.test/)
    const link = new RegExp(`http://localhost:${port}/console/invitations/([A-Za-z0-9]+)`).exec(out)
    assert.ok(link, out)
    const invitation = await fetch(`http://127.0.0.1:${port}/console/invitations/${link[1]}`)
    assert.equal(invitation.status, 200)
    assert.match(await invitation.text(), /Set your password/)
  } finally {
    child.kill('SIGTERM')
    await new Promise((resolve) => child.once('exit', resolve))
  }
})
