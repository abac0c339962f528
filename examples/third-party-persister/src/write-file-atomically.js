import { randomBytes } from 'node:crypto'
import { mkdir, open, rename, rm } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

/**
 * Replaces `filename` with `text` so that a crash at any moment leaves either the old or the new
 * file, never a mix: the text goes to a temporary file in the same folder, is flushed to disk,
 * and is renamed over `filename` (an atomic step on POSIX file systems); the folder is then
 * flushed so the rename itself survives a power loss. Missing parent folders are created.
 *
 * @param {string} filename
 * @param {string} text
 * @returns {Promise<void>}
 */
export async function writeFileAtomically(filename, text) {
  const folder = dirname(filename)
  await mkdir(folder, { recursive: true })
  const temporary = join(
    folder,
    `.${basename(filename)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  )
  try {
    const handle = await open(temporary, 'wx', 0o600)
    try {
      await handle.writeFile(text, 'utf8')
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temporary, filename)
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {})
    throw error
  }
  await syncFolder(folder)
}

/**
 * Flushes a folder's entries (the rename) to disk; not every platform allows it, so best effort.
 * @param {string} folder
 */
async function syncFolder(folder) {
  let handle
  try {
    handle = await open(folder, 'r')
    await handle.sync()
  } catch {
    // Windows cannot open a folder; the rename is still atomic there.
  } finally {
    await handle?.close()
  }
}
