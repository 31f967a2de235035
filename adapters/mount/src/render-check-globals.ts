// The host globals React's server renderer and common component code touch that QuickJS lacks.
// Imported first by render-check.tsx, so they exist before React initialises. The check renders
// once, synchronously: timers never fire. A component that works in a card must not fail here
// for want of a browser, so browser objects are inert values and `Intl` formats plainly.

const global = globalThis as unknown as Record<string, unknown>;

/** A value whose every property, call, construction and iteration gives another, and which
 * reads as '' in text: a component touching it the way a browser allows renders. */
export function inert(): unknown {
  const proxy: unknown = new Proxy(function inertValue() {}, {
    get(_target, key) {
      if (key === Symbol.toPrimitive) return () => '';
      if (key === Symbol.hasInstance) return () => false;
      if (key === Symbol.iterator) return function* () {
        yield proxy;
        yield proxy;
      };
      if (key === 'then' || key === '$$typeof') return undefined;
      if (key === 'length') return 0;
      return proxy;
    },
    apply: () => proxy,
    construct: () => proxy as object,
  });
  return proxy;
}

function define(name: string, value: unknown): void {
  if (typeof global[name] === 'undefined') global[name] = value;
}

const ignore = (): void => {};
define('console', { log: ignore, info: ignore, warn: ignore, error: ignore, debug: ignore, trace: ignore });

let nextTimer = 1;
define('setTimeout', (): number => nextTimer++);
define('setInterval', (): number => nextTimer++);
define('clearTimeout', ignore);
define('clearInterval', ignore);
define('requestAnimationFrame', (): number => nextTimer++);
define('cancelAnimationFrame', ignore);
define('queueMicrotask', (task: () => void): void => {
  void Promise.resolve().then(task);
});
define('performance', { now: (): number => Date.now() });
define('structuredClone', (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value))));
define('crypto', {
  randomUUID: (): string => '00000000-0000-4000-8000-000000000000',
  getRandomValues: <T extends ArrayBufferView>(array: T): T => array,
});

// Browser objects: present in a card, absent here.
for (const name of ['window', 'self', 'document', 'navigator', 'location', 'history', 'screen', 'matchMedia', 'getComputedStyle', 'ResizeObserver', 'IntersectionObserver', 'MutationObserver', 'Image', 'CustomEvent', 'Event']) {
  define(name, inert());
}

// QuickJS has no Intl. Plain formats keep a component that formats numbers and dates rendering.
interface NumberOptions {
  style?: string;
  currency?: string;
  minimumFractionDigits?: number;
  maximumFractionDigits?: number;
}

function formatNumber(value: unknown, options: NumberOptions = {}): string {
  const number = Number(value);
  const digits = options.maximumFractionDigits ?? options.minimumFractionDigits ?? (options.style === 'currency' ? 2 : undefined);
  const text = digits === undefined ? String(number) : number.toFixed(Math.min(Math.max(digits, 0), 20));
  if (options.style === 'currency') return `${options.currency ?? ''} ${text}`.trim();
  if (options.style === 'percent') return `${(number * 100).toFixed(digits ?? 0)}%`;
  return text;
}

function formatDate(value: unknown): string {
  const date = value instanceof Date ? value : new Date(value === undefined ? Date.now() : (value as number));
  return Number.isNaN(date.getTime()) ? 'Invalid Date' : date.toISOString();
}

function parts(text: string): { type: string; value: string }[] {
  return [{ type: 'literal', value: text }];
}

const resolved = (options: unknown) => () => ({ locale: 'en-US', ...(typeof options === 'object' ? options : {}) });

define('Intl', {
  NumberFormat: function NumberFormat(_locale?: unknown, options?: NumberOptions) {
    return { format: (v: unknown) => formatNumber(v, options), formatToParts: (v: unknown) => parts(formatNumber(v, options)), resolvedOptions: resolved(options) };
  },
  DateTimeFormat: function DateTimeFormat(_locale?: unknown, options?: unknown) {
    return { format: formatDate, formatToParts: (v: unknown) => parts(formatDate(v)), formatRange: (a: unknown, b: unknown) => `${formatDate(a)} – ${formatDate(b)}`, resolvedOptions: resolved(options) };
  },
  RelativeTimeFormat: function RelativeTimeFormat() {
    return { format: (n: number, unit: string) => `${n} ${unit}` };
  },
  PluralRules: function PluralRules() {
    return { select: (n: number) => (n === 1 ? 'one' : 'other') };
  },
  ListFormat: function ListFormat() {
    return { format: (list: Iterable<string>) => Array.from(list).join(', ') };
  },
  Collator: function Collator() {
    return { compare: (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0) };
  },
  getCanonicalLocales: (locales: unknown) => (Array.isArray(locales) ? locales : locales === undefined ? [] : [locales]),
});
