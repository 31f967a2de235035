// `DataTable` of the kit: rows of objects as a table with right-aligned tabular numbers while
// every column fits the card (at least 480 px and 88 px per column up to 640 px, measured with a
// ResizeObserver), a stacked list with every column labelled below that: no column is ever
// hidden behind a horizontal scroll. The built-in generator's tables behave the same.

import { useCallback, useState, type ReactNode } from 'react';

export interface DataTableColumn<Row> {
  label: string;
  /** Right-aligned tabular numerals. */
  numeric?: boolean;
  cell: (row: Row) => ReactNode;
}

export function DataTable<Row>({ rows, columns, empty = 'No rows yet.' }: { rows: Row[]; columns: DataTableColumn<Row>[]; empty?: string }): ReactNode {
  const [narrow, setNarrow] = useState(false);
  const measure = useCallback(
    (element: HTMLDivElement | null) => {
      if (!element || typeof ResizeObserver === 'undefined') return;
      const needed = Math.min(640, Math.max(480, columns.length * 88));
      new ResizeObserver(([entry]) => setNarrow((entry?.contentRect.width ?? needed) < needed)).observe(element);
    },
    [columns.length],
  );
  if (rows.length === 0) return <p style={{ margin: 0, color: 'var(--svc-color-muted)' }}>{empty}</p>;
  const value = (numeric: boolean | undefined) => (numeric ? { textAlign: 'right' as const, fontVariantNumeric: 'tabular-nums' } : {});
  const cellStyle = { padding: 'calc(var(--svc-space) / 2) var(--svc-space)', borderBottom: '1px solid var(--svc-color-border)', overflowWrap: 'anywhere' as const };
  return (
    <div ref={measure} data-layout={narrow ? 'stacked' : 'table'}>
      {narrow ? (
        <ul style={{ margin: 0, padding: 0, listStyle: 'none', display: 'flex', flexDirection: 'column', gap: 'var(--svc-space)' }}>
          {rows.map((row, index) => (
            <li key={index} style={{ padding: 'var(--svc-space)', border: '1px solid var(--svc-color-border)', borderRadius: 'var(--svc-radius)' }}>
              {columns.map((column, position) => (
                <div key={position} style={{ display: 'flex', justifyContent: 'space-between', gap: 'var(--svc-space)' }}>
                  <span style={{ fontSize: '0.85em', color: 'var(--svc-color-muted)' }}>{column.label}</span>
                  <span style={{ minWidth: 0, overflowWrap: 'anywhere', ...value(column.numeric) }}>{column.cell(row)}</span>
                </div>
              ))}
            </li>
          ))}
        </ul>
      ) : (
        <table style={{ width: '100%', borderCollapse: 'collapse' }}>
          <thead>
            <tr>
              {columns.map((column, position) => (
                <th key={position} scope="col" style={{ ...cellStyle, textAlign: column.numeric ? 'right' : 'left', position: 'sticky', top: 0, background: 'var(--svc-color-bg)' }}>
                  {column.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row, index) => (
              <tr key={index}>
                {columns.map((column, position) => (
                  <td key={position} style={{ ...cellStyle, ...value(column.numeric) }}>
                    {column.cell(row)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
