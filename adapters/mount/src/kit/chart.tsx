// `Chart` of the kit: a bar chart, a line chart or a sparkline as accessible SVG (one labelled
// image naming every point, a tooltip per point). It draws what the built-in generator draws;
// the numbers should stay on the card too (a list or a DataTable) as the readable fallback.

import type { ReactNode } from 'react';

export interface ChartPoint {
  label: string;
  value: number;
}

export interface ChartProps {
  kind: 'bar' | 'line' | 'sparkline';
  /** What the series is, e.g. "Revenue per day": the start of the image's accessible name. */
  label: string;
  points: ChartPoint[];
  /** How a value is named in the label and tooltips; default: Intl number format. */
  format?: (value: number) => string;
}

const defaultFormat = (value: number): string => new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 }).format(value);
const ACCENT = 'var(--svc-color-accent)';

export function Chart({ kind, label, points, format = defaultFormat }: ChartProps): ReactNode {
  const values = points.map((point) => (Number.isFinite(point.value) ? point.value : 0));
  if (values.length < 2) return null;
  // A sparkline sits beside its number and names the values alone, in order; a chart names each
  // point by its label (or its position).
  const name = (index: number): string => {
    const value = format(values[index] ?? 0);
    if (kind === 'sparkline') return value;
    const point = points[index]?.label ?? '';
    return `${point === '' ? index + 1 : point}: ${value}`;
  };
  const summary = `${label}: ${values.map((_, index) => name(index)).join(', ')}`;
  const top = Math.max(kind === 'bar' ? 0 : -Infinity, ...values);
  const bottom = Math.min(kind === 'bar' ? 0 : Infinity, ...values);
  const span = top - bottom || 1;
  if (kind === 'bar') {
    const height = 60;
    const zero = (top / span) * height;
    return (
      <svg role="img" aria-label={summary} viewBox={`0 0 ${values.length * 10} ${height}`} preserveAspectRatio="none" width="100%" height={height} style={{ display: 'block' }}>
        {values.map((value, index) => (
          <rect key={index} x={index * 10 + 1} width={8} y={value >= 0 ? zero - (value / span) * height : zero} height={Math.max((Math.abs(value) / span) * height, 0.5)} style={{ fill: ACCENT }}>
            <title>{name(index)}</title>
          </rect>
        ))}
      </svg>
    );
  }
  const sparkline = kind === 'sparkline';
  const [width, height, pad] = sparkline ? [100, 24, 2] : [320, 90, 6];
  const x = (index: number): number => pad + (index * (width - 2 * pad)) / (values.length - 1);
  const y = (value: number): number => pad + (1 - (value - bottom) / span) * (height - 2 * pad);
  return (
    <svg
      role="img"
      aria-label={summary}
      viewBox={`0 0 ${width} ${height}`}
      width="100%"
      {...(sparkline ? { height, preserveAspectRatio: 'none' } : {})}
      style={sparkline ? { display: 'block', maxWidth: '10em' } : { display: 'block', height: 'auto', maxHeight: '12em' }}
    >
      <polyline points={values.map((value, index) => `${x(index)},${y(value)}`).join(' ')} vectorEffect="non-scaling-stroke" style={{ fill: 'none', stroke: ACCENT, strokeWidth: sparkline ? 1.5 : 2 }} />
      {!sparkline &&
        values.map((value, index) => (
          <circle key={index} cx={x(index)} cy={y(value)} r={3} style={{ fill: ACCENT }}>
            <title>{name(index)}</title>
          </circle>
        ))}
    </svg>
  );
}
