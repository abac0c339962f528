// The tools of the support desk: plain functions over a little in-memory data, so the example
// runs anywhere. Billing looks invoices up; the researcher searches the policy handbook.

/** @type {Record<string, { customer: string, amount: string, charges: string[] }>} */
const INVOICES = {
  'INV-1042': { customer: 'Dana Ortiz', amount: 'EUR 49.00', charges: ['2025-03-02', '2025-03-02'] },
  'INV-1043': { customer: 'Lee Park', amount: 'EUR 19.00', charges: ['2025-03-04'] },
}

/** The policy handbook, one section per entry. */
const HANDBOOK = [
  {
    section: '4.2',
    title: 'Duplicate charges',
    text: 'A customer charged twice for one invoice gets the extra charge refunded in full, within 5 business days, without asking for a reason.',
  },
  {
    section: '4.3',
    title: 'Refunds after 30 days',
    text: 'Other refunds more than 30 days after the charge need the approval of a team lead.',
  },
  { section: '7.1', title: 'Password resets', text: 'Password resets are self-service at /account/reset.' },
]

/** @type {import('@agentx/core').Tool<{ invoice: string }>} */
export const lookupInvoice = {
  name: 'lookup_invoice',
  description: 'The customer, amount and charges of an invoice.',
  inputSchema: {
    type: 'object',
    properties: { invoice: { type: 'string', description: 'An invoice number such as INV-1042.' } },
    required: ['invoice'],
  },
  execute: (input) => {
    const invoice = INVOICES[input.invoice.toUpperCase()]
    if (invoice === undefined) return `No invoice ${input.invoice}.`
    return `${input.invoice}: ${invoice.customer}, ${invoice.amount}, charged ${invoice.charges.length} time(s) (${invoice.charges.join(', ')}).`
  },
}

/** @type {import('@agentx/core').Tool<{ query: string }>} */
export const searchPolicies = {
  name: 'search_policies',
  description: 'Searches the support policy handbook; returns the matching sections.',
  inputSchema: {
    type: 'object',
    properties: { query: { type: 'string' } },
    required: ['query'],
  },
  execute: (input) => {
    const words = input.query
      .toLowerCase()
      .split(/\W+/)
      .filter((word) => word.length > 3)
    const hits = HANDBOOK.filter((entry) =>
      words.some((word) => `${entry.title} ${entry.text}`.toLowerCase().includes(word.slice(0, 6))),
    )
    if (hits.length === 0) return 'No section matches.'
    return hits.map((entry) => `§${entry.section} ${entry.title}: ${entry.text}`).join('\n')
  },
}
