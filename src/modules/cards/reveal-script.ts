/**
 * The hosted card details page's only script, served as a file of the service's origin and loaded with the page's
 * CSP nonce (no inline script). It shows the copy buttons and copies a value with the Clipboard API (the embedding
 * iframe needs `allow="clipboard-write"`), falling back to a selection and `execCommand('copy')`; the status line says
 * what happened, for screen readers too. Without script the buttons stay hidden and the values are selectable.
 */
export const REVEAL_SCRIPT = `'use strict'
;(() => {
  const status = document.getElementById('status')
  const fallback = (text) => {
    const area = document.createElement('textarea')
    area.value = text
    area.setAttribute('readonly', '')
    area.className = 'visually-hidden'
    document.body.append(area)
    area.select()
    let copied = false
    try {
      copied = document.execCommand('copy')
    } catch {
      copied = false
    }
    area.remove()
    return copied
  }
  const copy = async (text) => {
    try {
      await navigator.clipboard.writeText(text)
      return true
    } catch {
      return fallback(text)
    }
  }
  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.hidden = false
    button.addEventListener('click', async () => {
      const copied = await copy(button.dataset.copy)
      status.textContent = copied
        ? button.dataset.label + ' copied.'
        : 'Copying is not allowed here; select the text instead.'
      if (!copied) return
      const text = button.querySelector('.copy-text')
      text.textContent = 'Copied'
      setTimeout(() => {
        text.textContent = 'Copy'
      }, 2000)
    })
  }
})()
`
