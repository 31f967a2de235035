//! Small fixed functions a generated component may carry: safe formatting of values whose type
//! the schema promises but the runtime cannot guarantee, and conversions for form inputs.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Helper {
    AsText,
    At,
    AsRows,
    FormatNumber,
    FormatBoolean,
    FormatDate,
    FormatDateTime,
    SafeLink,
    JsonValue,
    AsInputText,
    ToIsoDateTime,
    ToDateTimeLocal,
    ParseJson,
    FormatMoney,
    FormatPercent,
    FormatUnit,
    FormatTime,
    ToFullTime,
    DescribeSent,
    FieldErrors,
    ChartPoints,
}

impl Helper {
    pub(crate) fn dependencies(self) -> &'static [Helper] {
        match self {
            Self::FormatNumber
            | Self::FormatDate
            | Self::FormatDateTime
            | Self::SafeLink
            | Self::JsonValue
            | Self::FormatTime => &[Self::AsText],
            Self::FormatMoney | Self::FormatPercent | Self::FormatUnit => &[Self::AsText, Self::FormatNumber],
            Self::DescribeSent => &[Self::AsText],
            _ => &[],
        }
    }

    pub(crate) fn source(self) -> &'static str {
        match self {
            Self::AsText => AS_TEXT,
            Self::At => AT,
            Self::AsRows => AS_ROWS,
            Self::FormatNumber => FORMAT_NUMBER,
            Self::FormatBoolean => FORMAT_BOOLEAN,
            Self::FormatDate => FORMAT_DATE,
            Self::FormatDateTime => FORMAT_DATE_TIME,
            Self::SafeLink => SAFE_LINK,
            Self::JsonValue => JSON_VALUE,
            Self::AsInputText => AS_INPUT_TEXT,
            Self::ToIsoDateTime => TO_ISO_DATE_TIME,
            Self::ToDateTimeLocal => TO_DATE_TIME_LOCAL,
            Self::ParseJson => PARSE_JSON,
            Self::FormatMoney => FORMAT_MONEY,
            Self::FormatPercent => FORMAT_PERCENT,
            Self::FormatUnit => FORMAT_UNIT,
            Self::FormatTime => FORMAT_TIME,
            Self::ToFullTime => TO_FULL_TIME,
            Self::DescribeSent => DESCRIBE_SENT,
            Self::FieldErrors => FIELD_ERRORS,
            Self::ChartPoints => CHART_POINTS,
        }
    }
}

const AS_TEXT: &str = r#"function asText(value: unknown): string {
  if (value === null || value === undefined || value === "") return "—";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
"#;

const AT: &str = r#"function at(value: unknown, key: string): unknown {
  return value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
}
"#;

const AS_ROWS: &str = r#"function asRows(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
"#;

// `Intl` with the browser's locale: grouping and decimal marks as the person reads them.
const FORMAT_NUMBER: &str = r#"function formatNumber(value: unknown): string {
  return typeof value === "number" ? new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 }).format(value) : asText(value);
}
"#;

const FORMAT_BOOLEAN: &str = r#"function formatBoolean(value: unknown): string {
  if (value === true) return "Yes";
  if (value === false) return "No";
  return "—";
}
"#;

const FORMAT_DATE: &str = r#"function formatDate(value: unknown): string {
  const date = typeof value === "string" ? new Date(value + "T00:00:00") : null;
  return date && !Number.isNaN(date.getTime()) ? date.toLocaleDateString() : asText(value);
}
"#;

const FORMAT_DATE_TIME: &str = r#"function formatDateTime(value: unknown): string {
  const date = typeof value === "string" || typeof value === "number" ? new Date(value) : null;
  return date && !Number.isNaN(date.getTime()) ? date.toLocaleString() : asText(value);
}
"#;

// Only http(s) becomes a link: a `javascript:` URL in props must never be clickable.
const SAFE_LINK: &str = r#"function SafeLink({ href }: { href: unknown }): ReactNode {
  const text = asText(href);
  if (typeof href !== "string" || !/^https?:\/\//i.test(href)) return <span>{text}</span>;
  return (
    <a href={href} target="_blank" rel="noopener noreferrer" style={styles.link}>
      {text}
    </a>
  );
}
"#;

const JSON_VALUE: &str = r#"function JsonValue({ value }: { value: unknown }): ReactNode {
  if (Array.isArray(value)) {
    if (value.length === 0) return <span style={styles.muted}>{"None"}</span>;
    return (
      <ul style={styles.list}>
        {value.map((item, index) => (
          <li key={index}>
            <JsonValue value={item} />
          </li>
        ))}
      </ul>
    );
  }
  if (value !== null && typeof value === "object") {
    return (
      <dl style={styles.fields}>
        {Object.entries(value as Record<string, unknown>).map(([key, item]) => (
          <div key={key} style={styles.fieldRow}>
            <dt style={styles.fieldName}>{key}</dt>
            <dd style={styles.fieldValue}>
              <JsonValue value={item} />
            </dd>
          </div>
        ))}
      </dl>
    );
  }
  if (typeof value === "boolean") return <span>{value ? "Yes" : "No"}</span>;
  return <span>{asText(value)}</span>;
}
"#;

const AS_INPUT_TEXT: &str = r#"function asInputText(value: unknown): string {
  return value === null || value === undefined ? "" : String(value);
}
"#;

const TO_ISO_DATE_TIME: &str = r#"function toIsoDateTime(local: string): string {
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}
"#;

const TO_DATE_TIME_LOCAL: &str = r#"function toDateTimeLocal(value: unknown): string {
  const date = typeof value === "string" ? new Date(value) : null;
  if (!date || Number.isNaN(date.getTime())) return "";
  const pad = (part: number): string => String(part).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
"#;

const PARSE_JSON: &str = r#"function parseJson(text: string): { ok: boolean; value?: unknown } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
"#;

// An unknown currency code makes Intl throw: the number is still shown.
const FORMAT_MONEY: &str = r#"function formatMoney(value: unknown, currency: unknown): string {
  if (typeof value !== "number" || typeof currency !== "string") return formatNumber(value);
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency: currency.toUpperCase() }).format(value);
  } catch {
    return `${formatNumber(value)} ${currency}`;
  }
}
"#;

const FORMAT_PERCENT: &str = r#"function formatPercent(value: unknown, points: boolean): string {
  if (typeof value !== "number") return asText(value);
  return new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 1 }).format(points ? value / 100 : value);
}
"#;

const FORMAT_UNIT: &str = r#"function formatUnit(value: unknown, unit: string): string {
  if (typeof value !== "number") return asText(value);
  try {
    return new Intl.NumberFormat(undefined, { style: "unit", unit, maximumFractionDigits: 2 }).format(value);
  } catch {
    return `${formatNumber(value)} ${unit}`;
  }
}
"#;

// `09:30:00Z` reads as `09:30`; a non-UTC offset stays visible.
const FORMAT_TIME: &str = r#"function formatTime(value: unknown): string {
  if (typeof value !== "string") return asText(value);
  const parts = /^(\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/i.exec(value);
  if (!parts) return asText(value);
  return parts[2] && parts[2].toUpperCase() !== "Z" ? `${parts[1]} (${parts[2]})` : parts[1];
}
"#;

// `<input type="time">` gives `09:30`; JSON Schema's `format: time` wants RFC 3339 `09:30:00Z`.
// The person meant their own wall-clock time, so their current UTC offset is attached.
const TO_FULL_TIME: &str = r#"function toFullTime(local: string): string {
  const parts = /^(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local);
  if (!parts) return local;
  const offset = -new Date().getTimezoneOffset();
  const pad = (part: number): string => String(Math.floor(part)).padStart(2, "0");
  const zone = offset === 0 ? "Z" : `${offset > 0 ? "+" : "-"}${pad(Math.abs(offset) / 60)}:${pad(Math.abs(offset) % 60)}`;
  return `${parts[1]}:${parts[2]}:${parts[3] ?? "00"}${zone}`;
}
"#;

// What a sent state says was sent: the fields a person filled, briefly.
const DESCRIBE_SENT: &str = r#"function describeSent(data: unknown): string {
  if (data === undefined) return "";
  if (data === null || typeof data !== "object" || Array.isArray(data)) return asText(data);
  const parts = Object.entries(data as Record<string, unknown>).map(([key, value]) =>
    `${key}: ${Array.isArray(value) ? `${value.length} item${value.length === 1 ? "" : "s"}` : asText(value)}`,
  );
  return parts.join(", ");
}
"#;

// The server names the fields of a refused action by JSON Pointer (`/guests/0/name`); a missing
// required field is named by its parent and the message (`"date" is a required property`). Each
// error is shown on the control whose key is that path or a prefix of it.
const FIELD_ERRORS: &str = r#"function fieldErrors(violations: { path: string; message: string }[]): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const violation of violations) {
    const missing = /^"((?:[^"\\]|\\.)*)" is a required property/.exec(violation.message);
    const parent = violation.path.replace(/^\//, "");
    const path = missing ? (parent === "" ? missing[1] : `${parent}/${missing[1]}`) : parent;
    if (!(path in errors)) errors[path] = violation.message;
  }
  return errors;
}

function errorAt(errors: Record<string, string>, key: string): string | undefined {
  for (const [path, message] of Object.entries(errors)) {
    if (key === "" || path === key || path.startsWith(`${key}/`)) return message;
  }
  return undefined;
}
"#;

// The kit's `Chart` takes numbers; props promise them but the runtime cannot guarantee it, so a
// missing or non-finite value counts as 0 (the list or table under the chart shows it as it is).
const CHART_POINTS: &str = r#"function chartPoints(points: { label: string; value: unknown }[]): { label: string; value: number }[] {
  return points.map((point) => ({ label: point.label, value: typeof point.value === "number" && Number.isFinite(point.value) ? point.value : 0 }));
}
"#;
