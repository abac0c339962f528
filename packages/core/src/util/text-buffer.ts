/** Deltas gathered before they are joined into one flat piece. */
const PIECE = 256

/**
 * Streamed text built from many small deltas.
 *
 * `text += delta` allocates a rope node per delta and keeps every delta alive behind it until the
 * text is read, so a long reply costs two heap objects per chunk that every young-generation
 * collection copies again. Here deltas are only referenced from one reused array until 256 of them
 * are joined into one flat piece (linear in the text, never quadratic): the per-delta strings die
 * young and the reply is held in a few flat strings.
 */
export class TextBuffer {
  #pieces: string[] = []
  readonly #deltas: string[] = new Array<string>(PIECE).fill('')
  #count = 0
  /** The text's length in UTF-16 code units. */
  length = 0

  append(delta: string): void {
    this.#deltas[this.#count] = delta
    this.length += delta.length
    if (++this.#count === PIECE) {
      this.#pieces.push(this.#deltas.join(''))
      this.#count = 0
    }
  }

  toString(): string {
    if (this.#count > 0) {
      this.#pieces.push(this.#deltas.slice(0, this.#count).join(''))
      this.#count = 0
    }
    const pieces = this.#pieces
    if (pieces.length === 0) return ''
    if (pieces.length > 1) this.#pieces = [pieces.join('')]
    return this.#pieces[0] as string
  }
}
