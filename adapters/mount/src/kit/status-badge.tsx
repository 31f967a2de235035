// `StatusBadge` of the kit: a status word as a badge coloured by its meaning, with the words and
// the look of the built-in generator's status fields (docs/builtin-generator.md).

import type { ReactNode } from 'react';

export type StatusTone = 'danger' | 'success' | 'accent' | 'muted';

/** The tone the built-in generator gives a status word. */
export function statusTone(value: string): StatusTone {
  const word = value.toLowerCase();
  if (/(reject|fail|error|overdue|block|cancel|critical|urgent|high|down|late|denied|lost)/.test(word)) return 'danger';
  if (/(approv|done|complete|paid|success|active|ok|pass|resolv|shipped|delivered|up|won|ready|low)/.test(word)) return 'success';
  if (/(pending|wait|review|progress|draft|open|new|medium|scheduled|queued)/.test(word)) return 'accent';
  return 'muted';
}

export function StatusBadge({ value, tone }: { value: string; tone?: StatusTone }): ReactNode {
  const chosen = tone ?? statusTone(value);
  return (
    <span
      data-tone={chosen}
      style={{ alignSelf: 'flex-start', fontSize: '0.8em', padding: '0 calc(var(--svc-space) / 2)', color: `var(--svc-color-${chosen})`, border: '1px solid currentColor', borderRadius: 'var(--svc-radius)' }}
    >
      {value}
    </span>
  );
}
