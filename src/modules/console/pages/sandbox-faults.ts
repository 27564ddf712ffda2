import type { FastifyReply } from 'fastify'
import { withTx } from '../../../db/tx.js'
import type { ApiError } from '../../../http/errors.js'
import { FAULT_ERRORS, listFaults, setFault, type FaultError } from '../../../processors/faults.js'
import { PROCESSOR_OPERATIONS, type ProcessorOperation } from '../../../processors/port.js'
import { field, postForm, selectField, table } from '../components.js'
import { html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { consoleAction, keyField, pageScope } from './changes.js'
import { wholeNumber } from './form-input.js'
import { errorInWords, invalidField } from './refusals.js'
import { refuseOutsideSandbox, sandboxSection } from './sandbox.js'

export const PROCESSOR_FAULTS = '/console/sandbox/processor-faults'

async function faultsPage(ctx: PageContext, error?: ApiError, status = 200): Promise<FastifyReply> {
  const scope = pageScope(ctx)
  if (scope.environment !== 'sandbox') {
    return ctx.render({
      title: 'Processor faults',
      body: html`<p>Processor faults are a sandbox tool: switch to the sandbox to make the simulated processors fail on purpose.</p>`,
    })
  }
  const armed = await listFaults(ctx.deps.db, scope)
  return ctx.render(
    {
      title: 'Processor faults',
      body: html`<p class="muted">Make the next calls of one operation of the simulated processors fail for your organization's sandbox, to see how your integration and the console handle a processor that is down or refuses.</p>
${table({
  caption: 'Armed faults',
  rows: armed,
  empty: 'No fault is armed: every processor call succeeds.',
  columns: [
    { header: 'Operation', cell: (f) => html`<code>${f.operation}</code>` },
    { header: 'Answers', cell: (f) => html`<code>${f.error}</code>` },
    { header: 'Calls left', cell: (f) => f.remaining, numeric: true },
  ],
})}
${sandboxSection(
  ctx,
  'fault-h',
  'Arm a fault',
  html`${error ? errorInWords(ctx, error) : ''}
${postForm(
  PROCESSOR_FAULTS,
  ctx.csrf,
  html`${keyField()}
${selectField(
  'operation',
  'Operation',
  PROCESSOR_OPERATIONS.map((o): [string, string] => [o, o.replace(/_/g, ' ')]),
  'issue_card',
  { id: 'fault-operation' },
)}
${selectField(
  'error',
  'Error',
  FAULT_ERRORS.map((e): [string, string] => [e, e]),
  'processor_unavailable',
  { id: 'fault-error' },
)}
${field({ name: 'count', id: 'fault-count', label: 'Failing calls', value: '1', required: true, inputmode: 'numeric', hint: '0 disarms; at most 1,000.' })}
<button type="submit" class="primary">Arm</button>`,
  { label: 'Arm a processor fault' },
)}`,
)}`,
    },
    status,
  )
}

/** Processor faults (sandbox): the armed faults of the organization's sandbox, and arming one as /v1/simulate/processor_faults does. */
export const processorFaultPages: ConsolePage = {
  name: 'processor-faults',
  register(router) {
    router.get(PROCESSOR_FAULTS, 'organization', (ctx) => faultsPage(ctx))
    router.post(PROCESSOR_FAULTS, 'organization', async (ctx) => {
      refuseOutsideSandbox(ctx)
      const operation = ctx.text('operation') as ProcessorOperation
      const error = ctx.text('error') as FaultError
      const count = wholeNumber(ctx.text('count'))
      const refuse = (err: ApiError) => faultsPage(ctx, err, err.status)
      if (!PROCESSOR_OPERATIONS.includes(operation))
        return refuse(invalidField('operation', 'Choose an operation of the list.'))
      if (!FAULT_ERRORS.includes(error))
        return refuse(invalidField('error', 'Choose an error of the list.'))
      if (count === undefined || Number.isNaN(count) || count > 1000)
        return refuse(invalidField('count', 'Give a whole number from 0 to 1,000.'))
      return consoleAction(
        ctx,
        'processor_fault.set',
        async (unit) => {
          const fault = await withTx(unit.db, (trx) =>
            setFault(trx, pageScope(ctx), operation, error, count, unit.clock.now()),
          )
          return {
            to: PROCESSOR_FAULTS,
            text:
              fault.remaining === 0
                ? `${operation} is disarmed.`
                : `The next ${fault.remaining} ${operation} call${fault.remaining === 1 ? '' : 's'} will answer ${error}.`,
            objectId: null,
          }
        },
        refuse,
      )
    })
  },
}
