import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createContractReport } from '../src/engine/contract-report.js'
import { contractReportTarget, writeContractReport } from '../src/engine/write-contract-report.js'

let folder: string | undefined
afterEach(() => {
  if (folder) rmSync(folder, { recursive: true, force: true })
  folder = undefined
})

describe('where the bindings write the conformance report', () => {
  it('prefers AGENTX_CONTRACT_REPORT, falls back to the AGENTX_CONTRACT_REPORT_DIR directory CI sets', () => {
    expect(
      contractReportTarget({ AGENTX_CONTRACT_REPORT: 'out/report.json', AGENTX_CONTRACT_REPORT_DIR: '/ci' }),
    ).toBe('out/report.json')
    expect(contractReportTarget({ AGENTX_CONTRACT_REPORT_DIR: '/ci/reports/' })).toBe('/ci/reports/')
    expect(contractReportTarget({ AGENTX_CONTRACT_REPORT_DIR: '/ci/reports' })).toBe('/ci/reports/')
    expect(
      contractReportTarget({ AGENTX_CONTRACT_REPORT: '', AGENTX_CONTRACT_REPORT_DIR: '' }),
    ).toBeUndefined()
  })

  it('writes one file per contract into the directory, skips and their reasons included', () => {
    folder = mkdtempSync(join(tmpdir(), 'agentx-report-'))
    const target = contractReportTarget({ AGENTX_CONTRACT_REPORT_DIR: join(folder, 'nested') }) as string
    const report = createContractReport(
      'My Adapter (chat)',
      'adapter',
      ['toolCalls'],
      [
        {
          id: 'A-REQ-005',
          level: 'MUST',
          title: 'images',
          group: 'Requests',
          status: 'skipped',
          reason: "requires capability 'images', not declared",
        },
      ],
    )
    const file = writeContractReport(report, target)
    expect(file).toBe(join(folder, 'nested', 'adapter-My-Adapter-chat.json'))
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
      name: 'My Adapter (chat)',
      summary: { total: 1, skipped: 1, compliant: true },
      results: [{ id: 'A-REQ-005', status: 'skipped', reason: "requires capability 'images', not declared" }],
    })
  })
})
