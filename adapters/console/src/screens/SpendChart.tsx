// Spend over time: the ledger's charges (negative deltas, less refunds) summed per UTC day over
// the last 14 days, drawn as inline SVG bars. Only the ledger rows loaded so far count; the
// caption says how many.

import type { CreditTransaction } from '../tools';
import { formatCents } from '../ui';

const DAYS = 14;
const WIDTH = 560;
const HEIGHT = 160;
const LEFT = 8;
const BOTTOM = 20;
const TOP = 16;

export interface DaySpend {
  day: string;
  cents: number;
}

/** Cents spent per UTC day for the `DAYS` days ending `today`, oldest first. */
export function spendByDay(rows: CreditTransaction[], today: Date): DaySpend[] {
  const days: DaySpend[] = [];
  for (let back = DAYS - 1; back >= 0; back--) {
    const day = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - back));
    days.push({ day: day.toISOString().slice(0, 10), cents: 0 });
  }
  for (const row of rows) {
    const spent = row.deltaCents < 0 ? -row.deltaCents : row.kind === 'refund' ? -row.deltaCents : 0;
    if (spent === 0) continue;
    const slot = days.find((d) => d.day === row.createdAt.slice(0, 10));
    if (slot) slot.cents += spent;
  }
  for (const slot of days) slot.cents = Math.max(0, slot.cents);
  return days;
}

export function SpendChart({ rows }: { rows: CreditTransaction[] }) {
  const days = spendByDay(rows, new Date());
  const total = days.reduce((sum, d) => sum + d.cents, 0);
  const peak = days.reduce((best, d) => (d.cents > best.cents ? d : best), days[0]!);
  const max = Math.max(peak.cents, 1);
  const slot = (WIDTH - LEFT) / DAYS;
  const plot = HEIGHT - BOTTOM - TOP;
  const summary =
    total === 0
      ? `No spending in the last ${DAYS} days (from the ${rows.length} ledger rows loaded).`
      : `Spent ${formatCents(total)} in the last ${DAYS} days, most on ${peak.day} (${formatCents(peak.cents)}); from the ${rows.length} ledger rows loaded.`;
  return (
    <figure className="spend">
      <svg className="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`Spend per day. ${summary}`}>
        <line className="axis" x1={LEFT} x2={WIDTH} y1={HEIGHT - BOTTOM} y2={HEIGHT - BOTTOM} />
        {days.map((d, i) => {
          const height = (d.cents / max) * plot;
          const x = LEFT + i * slot + slot * 0.15;
          return (
            <g key={d.day}>
              {d.cents > 0 && (
                <rect className="bar" x={x} y={HEIGHT - BOTTOM - height} width={slot * 0.7} height={height}>
                  <title>{`${d.day}: ${formatCents(d.cents)}`}</title>
                </rect>
              )}
              {(i === 0 || i === DAYS - 1 || i === Math.floor(DAYS / 2)) && (
                <text x={x} y={HEIGHT - 5}>
                  {d.day.slice(5)}
                </text>
              )}
            </g>
          );
        })}
        {peak.cents > 0 && (
          <text x={LEFT} y={11}>
            {`peak ${formatCents(peak.cents)} a day`}
          </text>
        )}
      </svg>
      <figcaption className="meta">{summary}</figcaption>
    </figure>
  );
}
