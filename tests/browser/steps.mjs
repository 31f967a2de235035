// What the browser scripts (card-flow.mjs, gallery.mjs) share: how Chromium is launched here,
// and the assertions and polling their steps are written with.

/** Debian's Chromium, never a downloaded browser. */
export const CHROMIUM = process.env.SVC_CHROMIUM || '/usr/bin/chromium';
/** Without the background-networking flags this closed network refuses Chromium's own calls. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const WAIT_MS = 15_000;

/** A step's expectation that did not hold (the scripts report it with the step's name). */
export class StepFailure extends Error {}

export function check(condition, message) {
  if (!condition) throw new StepFailure(message);
}

export function same(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  check(a === e, `${what}: expected ${e}, got ${a}`);
}

/** Polls `probe` every 100 ms until it returns `true`; the last other answer names the failure. */
export async function waitFor(what, probe, timeout = WAIT_MS) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await probe();
      if (last === true) return;
    } catch (error) {
      last = error.message;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new StepFailure(`timed out after ${timeout} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
}
