/**
 * Evaluates an arithmetic expression: numbers, `+ - * / % ^`, unary minus and parentheses.
 *
 * A small recursive-descent parser (never `eval`), used by the demo `calculator` tool. Throws an
 * `Error` with a readable message on bad input or division by zero.
 *
 * @example
 * evaluateArithmetic('2 * (3 + 4)') // 14
 */
export function evaluateArithmetic(expression: string): number {
  if (typeof expression !== 'string' || expression.trim() === '') throw new Error('The expression is empty.')
  if (expression.length > 500) throw new Error('The expression is longer than 500 characters.')
  const tokens = tokenize(expression)
  let position = 0

  const peek = (): string | undefined => tokens[position]
  const take = (): string | undefined => tokens[position++]

  // expression := term (('+' | '-') term)*
  const parseExpression = (): number => {
    let value = parseTerm()
    for (let op = peek(); op === '+' || op === '-'; op = peek()) {
      take()
      const right = parseTerm()
      value = op === '+' ? value + right : value - right
    }
    return value
  }
  // term := power (('*' | '/' | '%') power)*
  const parseTerm = (): number => {
    let value = parsePower()
    for (let op = peek(); op === '*' || op === '/' || op === '%'; op = peek()) {
      take()
      const right = parsePower()
      if ((op === '/' || op === '%') && right === 0) throw new Error('Division by zero.')
      value = op === '*' ? value * right : op === '/' ? value / right : value % right
    }
    return value
  }
  // power := unary ('^' power)?   (right-associative)
  const parsePower = (): number => {
    const base = parseUnary()
    if (peek() === '^') {
      take()
      return base ** parsePower()
    }
    return base
  }
  // unary := '-' unary | '+' unary | primary
  const parseUnary = (): number => {
    const op = peek()
    if (op === '-' || op === '+') {
      take()
      const value = parseUnary()
      return op === '-' ? -value : value
    }
    return parsePrimary()
  }
  const parsePrimary = (): number => {
    const token = take()
    if (token === undefined) throw new Error('The expression ends too early.')
    if (token === '(') {
      const value = parseExpression()
      if (take() !== ')') throw new Error('A closing parenthesis is missing.')
      return value
    }
    const value = Number(token)
    if (!Number.isFinite(value)) throw new Error(`Unexpected "${token}".`)
    return value
  }

  const result = parseExpression()
  if (position < tokens.length) throw new Error(`Unexpected "${tokens[position]}".`)
  if (!Number.isFinite(result)) throw new Error('The result is not a finite number.')
  return result
}

function tokenize(expression: string): string[] {
  const tokens: string[] = []
  const pattern = /\s*(\d+(?:\.\d+)?|\.\d+|[-+*/%^()]|\S)/gy
  for (let match = pattern.exec(expression); match !== null; match = pattern.exec(expression)) {
    const token = match[1]!
    if (!/^(?:\d|\.\d|[-+*/%^()]$)/.test(token)) throw new Error(`Unexpected "${token}".`)
    tokens.push(token)
    if (pattern.lastIndex >= expression.length) break
  }
  return tokens
}
