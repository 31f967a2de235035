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
    let styles: Vec<(&str, String)> = vec![
        (
            "root",
            format!(
                "{arrangement}, gap: \"{gap}\", padding: \"{pad}\", boxSizing: \"border-box\", \
                 fontFamily: \"var(--svc-font-family)\", fontSize: \"var(--svc-font-size)\", overflowWrap: \"anywhere\", \
                 color: \"var(--svc-color-fg)\", background: \"var(--svc-color-bg)\""
            ),
        ),
        (
            "title",
            "margin: 0, fontSize: \"1.4em\", lineHeight: 1.25, gridColumn: \"1 / -1\"".into(),
        ),
        (
            "section",
            format!("display: \"flex\", flexDirection: \"column\", gap: \"{cell}\", minWidth: 0"),
        ),
        (
            "sectionTitle",
            "margin: 0, fontSize: \"0.8em\", fontWeight: 600, letterSpacing: \"0.04em\", textTransform: \"uppercase\", \
             color: \"var(--svc-color-muted)\""
                .into(),
        ),
        (
            "hint",
            "margin: 0, fontSize: \"0.9em\", color: \"var(--svc-color-muted)\"".into(),
        ),
        ("muted", "color: \"var(--svc-color-muted)\"".into()),
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
            "margin: 0, minWidth: 0, overflowWrap: \"anywhere\", whiteSpace: \"pre-wrap\"".into(),
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
                 borderRadius: \"var(--svc-radius)\", cursor: \"pointer\", whiteSpace: \"nowrap\""
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
        (
            "facts",
            format!(
                "margin: 0, display: \"grid\", gridTemplateColumns: \"repeat(auto-fill, minmax(9em, 1fr))\", \
                 columnGap: \"{gap}\", rowGap: \"{cell}\""
            ),
        ),
        ("fact", "display: \"flex\", flexDirection: \"column\", minWidth: 0".into()),
        (
            "factName",
            "fontSize: \"0.85em\", color: \"var(--svc-color-muted)\"".into(),
        ),
        (
            "tiles",
            format!(
                "display: \"grid\", gridTemplateColumns: \"repeat(auto-fill, minmax(11em, 1fr))\", gap: \"{cell}\""
            ),
        ),
        (
            "tile",
            format!(
                "display: \"flex\", flexDirection: \"column\", gap: \"calc(var(--svc-space) / 2)\", padding: \"{cell}\", \
                 minWidth: 0, background: \"var(--svc-color-surface)\", borderRadius: \"var(--svc-radius)\""
            ),
        ),
        (
            "tileValue",
            "fontSize: \"1.4em\", fontWeight: 600, fontVariantNumeric: \"tabular-nums\", overflowWrap: \"normal\", whiteSpace: \"nowrap\"".into(),
        ),
        (
            "prose",
            "margin: 0, whiteSpace: \"pre-wrap\", overflowWrap: \"anywhere\", lineHeight: 1.45".into(),
        ),
        (
            "actions",
            format!("display: \"flex\", flexWrap: \"wrap\", alignItems: \"center\", gap: \"{cell}\""),
        ),
        (
            "secondaryButton",
            format!(
                "alignSelf: \"flex-start\", font: \"inherit\", fontWeight: 600, padding: \"{cell} {gap}\", \
                 color: \"var(--svc-color-fg)\", background: \"var(--svc-color-bg)\", border: \"1px solid var(--svc-color-border)\", \
                 borderRadius: \"var(--svc-radius)\", cursor: \"pointer\", whiteSpace: \"nowrap\""
            ),
        ),
        (
            "dangerButton",
            format!(
                "alignSelf: \"flex-start\", font: \"inherit\", fontWeight: 600, padding: \"{cell} {gap}\", \
                 color: \"var(--svc-color-accent-fg)\", background: \"var(--svc-color-danger)\", border: \"none\", \
                 borderRadius: \"var(--svc-radius)\", cursor: \"pointer\", whiteSpace: \"nowrap\""
            ),
        ),
        (
            "fieldset",
            format!(
                "display: \"flex\", flexDirection: \"column\", gap: \"{cell}\", margin: 0, padding: \"{cell}\", minWidth: 0, \
                 border: \"1px solid var(--svc-color-border)\", borderRadius: \"var(--svc-radius)\""
            ),
        ),
        (
            "segments",
            "display: \"flex\", flexWrap: \"wrap\", gap: \"calc(var(--svc-space) / 2)\", margin: 0, padding: 0, border: \"none\"".into(),
        ),
        (
            "segment",
            format!(
                "display: \"flex\", alignItems: \"center\", gap: \"calc(var(--svc-space) / 2)\", padding: \"{cell}\", \
                 border: \"1px solid var(--svc-color-border)\", borderRadius: \"var(--svc-radius)\", cursor: \"pointer\""
            ),
        ),
        (
            "log",
            format!(
                "margin: 0, padding: \"{cell}\", listStyle: \"none\", fontFamily: \"var(--svc-font-mono)\", fontSize: \"0.9em\", \
                 background: \"var(--svc-color-surface)\", borderRadius: \"var(--svc-radius)\""
            ),
        ),
        (
            "steps",
            format!("display: \"flex\", flexWrap: \"wrap\", gap: \"{cell}\", margin: 0, padding: 0, listStyle: \"none\""),
        ),
        (
            "step",
            format!("padding: \"{cell}\", color: \"var(--svc-color-muted)\", borderBottom: \"3px solid var(--svc-color-border)\""),
        ),
        (
            "stepDone",
            format!("padding: \"{cell}\", color: \"var(--svc-color-fg)\", borderBottom: \"3px solid var(--svc-color-success)\""),
        ),
        (
            "stepCurrent",
            format!(
                "padding: \"{cell}\", fontWeight: 600, color: \"var(--svc-color-fg)\", borderBottom: \"3px solid var(--svc-color-accent)\""
            ),
        ),
        ("more", "margin: 0".into()),
        ("moreSummary", "cursor: \"pointer\", color: \"var(--svc-color-muted)\", padding: \"calc(var(--svc-space) / 2) 0\"".into()),
        ("logLine", "whiteSpace: \"pre-wrap\", overflowWrap: \"anywhere\"".into()),
        (
            "editorRow",
            format!(
                "display: \"grid\", gridTemplateColumns: \"repeat(auto-fit, minmax(8em, 1fr))\", alignItems: \"end\", gap: \"{cell}\""
            ),
        ),
    ];
    writer.line(0, "const styles: Record<string, CSSProperties> = {");
    for (name, body) in styles {
        writer.line(1, &format!("{name}: {{ {body} }},"));
    }
    writer.line(0, "};");
}
