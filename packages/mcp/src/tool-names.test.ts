import { describe, expect, it } from 'vitest'
import { MAX_TOOL_NAME_LENGTH, toToolNames } from './tool-names.js'

describe('toToolNames', () => {
  it('prefixes names and replaces characters providers reject', () => {
    expect(toToolNames(['read_file', 'git.log', 'a b/c'], 'fs_')).toEqual([
      'fs_read_file',
      'fs_git_log',
      'fs_a_b_c',
    ])
  })

  it('starts every name with a letter or _, as Gemini requires', () => {
    expect(toToolNames(['3d-render', '-x', 'ok'], '')).toEqual(['_3d-render', '_-x', 'ok'])
  })

  it('makes names unique after sanitizing, in list order', () => {
    expect(toToolNames(['a.b', 'a_b', 'a b'], '')).toEqual(['a_b', 'a_b_2', 'a_b_3'])
  })

  it('shortens long names to 64 characters with a stable hash suffix', () => {
    const long = 'x'.repeat(100)
    const [first, second] = toToolNames([long, `${long}y`], 'p_')
    expect(first).toHaveLength(MAX_TOOL_NAME_LENGTH)
    expect(second).toHaveLength(MAX_TOOL_NAME_LENGTH)
    expect(first).not.toBe(second)
    expect(toToolNames([long], 'p_')[0]).toBe(first)
    expect(first).toMatch(/^p_x+_[0-9a-f]{8}$/)
  })
})
