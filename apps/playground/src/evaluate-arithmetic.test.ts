import { describe, expect, it } from 'vitest'
import { evaluateArithmetic } from './evaluate-arithmetic.js'

describe('evaluateArithmetic', () => {
  it('follows operator precedence, parentheses and right-associative powers', () => {
    expect(evaluateArithmetic('12 * (3 + 4)')).toBe(84)
    expect(evaluateArithmetic('2 + 3 * 4')).toBe(14)
    expect(evaluateArithmetic('2 ^ 3 ^ 2')).toBe(512)
    expect(evaluateArithmetic('2 ^ 10 - 24')).toBe(1000)
    expect(evaluateArithmetic('-(2 + 3) * -2')).toBe(10)
    expect(evaluateArithmetic('7 % 4 + .5')).toBe(3.5)
  })

  it('rejects bad input with a readable message instead of evaluating it', () => {
    expect(() => evaluateArithmetic('')).toThrow('empty')
    expect(() => evaluateArithmetic('1 / 0')).toThrow('Division by zero')
    expect(() => evaluateArithmetic('(1 + 2')).toThrow('closing parenthesis')
    expect(() => evaluateArithmetic('process.exit(1)')).toThrow('Unexpected')
    expect(() => evaluateArithmetic('1 +')).toThrow('ends too early')
    expect(() => evaluateArithmetic('1 2')).toThrow('Unexpected "2"')
    expect(() => evaluateArithmetic('9'.repeat(501))).toThrow('longer than 500')
    expect(() => evaluateArithmetic('10 ^ 400')).toThrow('not a finite number')
  })
})
