import { createCipheriv, createHash, randomBytes } from 'node:crypto'
import type { FieldError } from '../../http/errors.js'
import { deriveKey, encryptAesGcm } from '../../lib/crypto.js'
import { MAX_DOCUMENT_BYTES } from './schemas.js'

const NOT_BASE64_OR_BREAK = /[^A-Za-z0-9+/=\r\n]/
const LINE_BREAK = /[\r\n]/
const LINE_BREAKS = /[\r\n]+/g
const CR = 13
const LF = 10
const PAD = 61

/** Line-break characters in `text` (MIME-style wrapping), counted without building a copy of it. */
function lineBreakCount(text: string): number {
  if (!LINE_BREAK.test(text)) return 0
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === LF || c === CR) n++
  }
  return n
}

/**
 * The decoded size of standard base64 text, or null when it is not valid base64. Works on the text without
 * decoding or copying it, so a 27 MB string is checked before any buffer is allocated. Line breaks
 * (MIME-style wrapping, as the `base64` command prints) are accepted and ignored.
 */
export function base64DecodedSize(text: string): number | null {
  if (NOT_BASE64_OR_BREAK.test(text)) return null
  const length = text.length - lineBreakCount(text)
  let body = length
  const firstPad = text.indexOf('=')
  if (firstPad !== -1) {
    // Only padding (and line breaks) may follow the first '=': at most two of them, completing a quantum.
    let pads = 0
    for (let i = firstPad; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c === PAD) pads++
      else if (c !== LF && c !== CR) return null
    }
    if (pads > 2 || length % 4 !== 0) return null
    body = length - pads
  }
  if (body % 4 === 1) return null
  return Math.floor((body * 3) / 4)
}

/** Checks one document's content: valid base64, not empty, at most 20 MiB decoded. */
export function checkDocumentContent(content: string, param: string): FieldError | null {
  const size = base64DecodedSize(content)
  if (size === null)
    return {
      code: 'invalid_parameter',
      param,
      message: `${param} is not valid base64 (standard alphabet A–Z a–z 0–9 + /, optional = padding).`,
    }
  if (size === 0) return { code: 'invalid_parameter', param, message: `${param} is empty.` }
  if (size > MAX_DOCUMENT_BYTES) {
    return {
      code: 'invalid_parameter',
      param,
      message: `${param} decodes to ${size} bytes; each document may be at most ${MAX_DOCUMENT_BYTES} bytes (20 MiB).`,
    }
  }
  return null
}

export interface SealedDocument {
  sizeBytes: number
  sha256: string
  wrappedKey: Buffer
  ciphertext: Buffer
}

/** The associated data binding a document's ciphertext to its id: a blob moved to another row does not decrypt. */
export function documentAad(documentId: string): string {
  return `kyc_document:${documentId}`
}

/** Base64 characters decoded per step: a multiple of 4, so every step but the last ends on a whole quantum. */
const STEP_CHARS = 256 * 1024
const IV_BYTES = 12
const TAG_BYTES = 16

/**
 * Decodes and encrypts one document under a fresh data key (wrapped by the master key), in steps of 192 KiB:
 * the decoded file never exists in one piece. Its bytes go through SHA-256 and AES-256-GCM step by step into the
 * one buffer the ciphertext needs (laid out as `encryptAesGcm` does: iv, tag, body, so `openWithDataKey` opens
 * it), and each decoded step is zeroed once used. Memory beside the base64 text: the ciphertext and 192 KiB.
 */
export function sealDocument(
  masterKey: Buffer,
  documentId: string,
  content: string,
): SealedDocument {
  const size = base64DecodedSize(content)
  if (size === null)
    throw new Error('sealDocument: content is not valid base64 (checkDocumentContent first)')
  const sealed = Buffer.allocUnsafeSlow(IV_BYTES + TAG_BYTES + size)
  const dataKey = randomBytes(32)
  const step = Buffer.allocUnsafeSlow((STEP_CHARS / 4 + 1) * 3)
  try {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', dataKey, iv)
    cipher.setAAD(Buffer.from(documentAad(documentId)))
    const hash = createHash('sha256')
    let written = IV_BYTES + TAG_BYTES
    let carry = ''
    for (let at = 0; at < content.length; at += STEP_CHARS) {
      let piece = content.slice(at, at + STEP_CHARS)
      if (LINE_BREAK.test(piece)) piece = piece.replace(LINE_BREAKS, '')
      if (carry) piece = carry + piece
      const last = at + STEP_CHARS >= content.length
      const usable = last ? piece.length : piece.length - (piece.length % 4)
      carry = piece.slice(usable)
      const plain = step.subarray(0, step.write(piece.slice(0, usable), 0, 'base64'))
      hash.update(plain)
      written += cipher.update(plain).copy(sealed, written)
      plain.fill(0)
    }
    written += cipher.final().copy(sealed, written)
    if (written !== sealed.length)
      throw new Error(
        `sealDocument: decoded ${written - IV_BYTES - TAG_BYTES} bytes, expected ${size}`,
      )
    iv.copy(sealed, 0)
    cipher.getAuthTag().copy(sealed, IV_BYTES)
    const wrappedKey = encryptAesGcm(deriveKey(masterKey, 'data-key-wrap'), dataKey)
    return { sizeBytes: size, sha256: hash.digest('hex'), wrappedKey, ciphertext: sealed }
  } finally {
    dataKey.fill(0)
    step.fill(0)
  }
}
