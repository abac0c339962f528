import { ensureChromium } from './ensure-chromium.js'

/** Runs once before the tests: installs Chromium for the browser tests when it is missing and that is permitted. */
export default function setup(): void {
  ensureChromium()
}
