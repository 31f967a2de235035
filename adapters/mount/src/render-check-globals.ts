// The few host globals React's server renderer and common component code touch that QuickJS
// lacks. Imported first by render-check.tsx, so they exist before React initialises. Timers never
// fire: a render check is one synchronous render.

const global = globalThis as unknown as Record<string, unknown>;

if (typeof global.console === 'undefined') {
  const ignore = (): void => {};
  global.console = { log: ignore, info: ignore, warn: ignore, error: ignore, debug: ignore, trace: ignore };
}
if (typeof global.setTimeout === 'undefined') {
  let next = 1;
  global.setTimeout = (): number => next++;
  global.clearTimeout = (): void => {};
  global.setInterval = (): number => next++;
  global.clearInterval = (): void => {};
}
if (typeof global.queueMicrotask === 'undefined') {
  global.queueMicrotask = (task: () => void): void => {
    void Promise.resolve().then(task);
  };
}
if (typeof global.performance === 'undefined') {
  global.performance = { now: (): number => Date.now() };
}
