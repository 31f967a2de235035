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
}

impl Helper {
    pub(crate) fn dependencies(self) -> &'static [Helper] {
        match self {
            Self::FormatNumber | Self::FormatDate | Self::FormatDateTime | Self::SafeLink | Self::JsonValue => {
                &[Self::AsText]
            }
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

const FORMAT_NUMBER: &str = r#"function formatNumber(value: unknown): string {
  return typeof value === "number" ? value.toLocaleString() : asText(value);
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
