import type { FieldError } from '../../http/errors.js'
import { sealWithDataKey, sha256Hex } from '../../lib/crypto.js'
import { MAX_DOCUMENT_BYTES } from './schemas.js'

const NOT_BASE64 = /[^A-Za-z0-9+/=]/

const LINE_BREAK = /[\r\n]/
const LINE_BREAKS = /[\r\n]+/g

/**
 * The decoded size of standard base64 text, or null when it is not valid base64. Works on the text
 * without decoding it, so a 27 MB string is checked before any buffer is allocated. Line breaks (MIME-style
 * wrapping, as the `base64` command prints) are accepted and ignored.
 */
export function base64DecodedSize(text: string): number | null {
  const content = LINE_BREAK.test(text) ? text.replace(LINE_BREAKS, '') : text
  if (NOT_BASE64.test(content)) return null
  const firstPad = content.indexOf('=')
  let body = content.length
  if (firstPad !== -1) {
    const padding = content.length - firstPad
    if (padding > 2 || content.length % 4 !== 0) return null
    for (let i = firstPad; i < content.length; i++) if (content.charCodeAt(i) !== 61) return null
    body = firstPad
  }
  if (body % 4 === 1) return null
  return Math.floor((body * 3) / 4)
}

/** Checks one document's content: valid base64, not empty, at most 20 MiB decoded. */
export function checkDocumentContent(content: string, param: string): FieldError | null {
  const size = base64DecodedSize(content)
  if (size === null) return { code: 'invalid_parameter', param, message: `${param} is not valid base64 (standard alphabet A–Z a–z 0–9 + /, optional = padding).` }
  if (size === 0) return { code: 'invalid_parameter', param, message: `${param} is empty.` }
  if (size > MAX_DOCUMENT_BYTES) {
    return { code: 'invalid_parameter', param, message: `${param} decodes to ${size} bytes; each document may be at most ${MAX_DOCUMENT_BYTES} bytes (20 MiB).` }
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

/**
 * Decodes and encrypts one document under a fresh data key (wrapped by the master key). The plaintext
 * buffer is zeroed before returning; callers handle documents one at a time so at most one is decoded.
 */
export function sealDocument(masterKey: Buffer, documentId: string, content: string): SealedDocument {
  const plaintext = Buffer.from(content, 'base64')
  try {
    const { wrappedKey, ciphertext } = sealWithDataKey(masterKey, plaintext, documentAad(documentId))
    return { sizeBytes: plaintext.length, sha256: sha256Hex(plaintext), wrappedKey, ciphertext }
  } finally {
    plaintext.fill(0)
  }
}
