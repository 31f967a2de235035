//! The inline style objects of a generated component. Every colour, font, radius and spacing is a
//! theme variable (`--svc-*`), so the host's theme restyles the card without regenerating it.

use crate::tsx_text::Writer;
use crate::variance::{Density, Layout, Variance};

/// Writes `const styles = { ... };` for the given variance.
pub(crate) fn write_styles(writer: &mut Writer, variance: Variance) {
    let (gap, pad, cell) = match variance.density {
        Density::Compact => ("var(--svc-space)", "var(--svc-space)", "calc(var(--svc-space) / 2)"),
        Density::Comfortable => (
            "calc(var(--svc-space) * 2)",
            "calc(var(--svc-space) * 2)",
            "var(--svc-space)",
        ),
    };
    let arrangement = match variance.layout {
        Layout::Stack => "display: \"flex\", flexDirection: \"column\"",
        Layout::Grid => {
            "display: \"grid\", gridTemplateColumns: \"repeat(auto-fit, minmax(260px, 1fr))\", alignItems: \"start\""
        }
    };
    let styles: [(&str, String); 24] = [
        (
            "root",
            format!(
                "{arrangement}, gap: \"{gap}\", padding: \"{pad}\", boxSizing: \"border-box\", \
                 fontFamily: \"var(--svc-font-family)\", fontSize: \"var(--svc-font-size)\", \
                 color: \"var(--svc-color-fg)\", background: \"var(--svc-color-bg)\""
            ),
        ),
        (
            "title",
            "margin: 0, fontSize: \"1.4em\", lineHeight: 1.25, gridColumn: \"1 / -1\"".into(),
        ),
        (
            "section",
            format!(
                "display: \"flex\", flexDirection: \"column\", gap: \"{cell}\", padding: \"{pad}\", minWidth: 0, \
                 background: \"var(--svc-color-surface)\", border: \"1px solid var(--svc-color-border)\", \
                 borderRadius: \"var(--svc-radius)\""
            ),
        ),
        ("sectionTitle", "margin: 0, fontSize: \"1em\", fontWeight: 600".into()),
        (
            "hint",
            "margin: 0, fontSize: \"0.9em\", color: \"var(--svc-color-muted)\"".into(),
        ),
        ("muted", "color: \"var(--svc-color-muted)\"".into()),
        ("scroll", "overflowX: \"auto\", maxWidth: \"100%\"".into()),
        ("table", "borderCollapse: \"collapse\", width: \"100%\"".into()),
        (
            "th",
            format!(
                "textAlign: \"left\", padding: \"{cell}\", fontWeight: 600, color: \"var(--svc-color-muted)\", \
                 borderBottom: \"2px solid var(--svc-color-border)\""
            ),
        ),
        (
            "td",
            format!("padding: \"{cell}\", verticalAlign: \"top\", borderBottom: \"1px solid var(--svc-color-border)\""),
        ),
        ("list", "margin: 0, paddingLeft: \"1.25em\"".into()),
        (
            "fields",
            format!(
                "margin: 0, display: \"grid\", gridTemplateColumns: \"minmax(6em, max-content) 1fr\", \
                 columnGap: \"{gap}\", rowGap: \"{cell}\""
            ),
        ),
        ("fieldRow", "display: \"contents\"".into()),
        ("fieldName", "color: \"var(--svc-color-muted)\"".into()),
        (
            "fieldValue",
            "margin: 0, minWidth: 0, overflowWrap: \"anywhere\"".into(),
        ),
        (
            "link",
            "color: \"var(--svc-color-accent)\", overflowWrap: \"anywhere\"".into(),
        ),
        (
            "form",
            format!("display: \"flex\", flexDirection: \"column\", gap: \"{cell}\", margin: 0"),
        ),
        (
            "inputLabel",
            "display: \"flex\", flexDirection: \"column\", gap: \"calc(var(--svc-space) / 2)\"".into(),
        ),
        (
            "checkLabel",
            "display: \"flex\", alignItems: \"center\", gap: \"var(--svc-space)\"".into(),
        ),
        (
            "input",
            format!(
                "font: \"inherit\", padding: \"{cell}\", color: \"var(--svc-color-fg)\", \
                 background: \"var(--svc-color-bg)\", border: \"1px solid var(--svc-color-border)\", \
                 borderRadius: \"var(--svc-radius)\""
            ),
        ),
        (
            "button",
            format!(
                "alignSelf: \"flex-start\", font: \"inherit\", fontWeight: 600, padding: \"{cell} {gap}\", \
                 color: \"var(--svc-color-accent-fg)\", background: \"var(--svc-color-accent)\", border: \"none\", \
                 borderRadius: \"var(--svc-radius)\", cursor: \"pointer\""
            ),
        ),
        (
            "status",
            "fontSize: \"0.9em\", color: \"var(--svc-color-success)\"".into(),
        ),
        (
            "error",
            "fontSize: \"0.9em\", color: \"var(--svc-color-danger)\"".into(),
        ),
        (
            "badge",
            "alignSelf: \"flex-start\", fontSize: \"0.8em\", padding: \"0 calc(var(--svc-space) / 2)\", \
             color: \"var(--svc-color-success)\", border: \"1px solid var(--svc-color-success)\", \
             borderRadius: \"var(--svc-radius)\""
                .into(),
        ),
    ];
    writer.line(0, "const styles: Record<string, CSSProperties> = {");
    for (name, body) in styles {
        writer.line(1, &format!("{name}: {{ {body} }},"));
    }
    writer.line(0, "};");
}
