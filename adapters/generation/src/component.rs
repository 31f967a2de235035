//! Assembles the whole TSX module for a contract: imports, styles, helpers, one component per
//! action, stream channel and context slot, and the default-exported card that lays them out.

use serde_json::{Map, Value};

use crate::action_forms::{Tone, is_button_only, tones, write_action_component};
use crate::context_slots::{write_slot_component, write_slots_section};
use crate::helpers::Helper;
use crate::needs::{Hook, Needs};
use crate::prop_views::{title_prop, write_prop_sections};
use crate::row_actions::{find_row_actions, write_row_action_component};
use crate::schema_kind::declared_entries;
use crate::stream_views::{RESERVED_CHANNEL_PREFIX, write_stream_component};
use crate::styles::write_styles;
use crate::tsx_text::{Writer, js_string, jsx_text, title_from_intent};
use crate::variance::Variance;

/// Package the standard hooks and the kit's components are imported from.
const GADGETS_PACKAGE: &str = svc_domain::gadgets::STANDARD_PACKAGE;

/// The TSX source for `contract` (an object; missing maps count as empty). Deterministic: the same
/// intent, contract and variance always give the same bytes.
pub(crate) fn component_source(intent: &str, contract: &Map<String, Value>, variance: &Value) -> String {
    let empty = Map::new();
    let section = |name: &str| contract.get(name).and_then(Value::as_object).unwrap_or(&empty);
    let props_spec = contract.get("propsSpec").unwrap_or(&Value::Null);
    let actions = declared_entries(section("actionSpec"));
    let streams: Vec<(&str, &Value)> = declared_entries(section("streamSpec"))
        .into_iter()
        .filter(|(channel, _)| !channel.starts_with(RESERVED_CHANNEL_PREFIX))
        .collect();
    let slots = declared_entries(section("contextSpec"));

    let mut needs = Needs::default();
    let mut parts = Writer::default();
    let intents: Vec<&str> = actions.iter().map(|(intent, _)| *intent).collect();
    let tones = tones(&intents);
    let row_actions = find_row_actions(props_spec, &actions);
    let row_action_at = |index: usize| row_actions.iter().find(|action| action.index == index);
    for (index, (intent, spec)) in actions.iter().enumerate() {
        match row_action_at(index) {
            Some(row_action) => write_row_action_component(&mut parts, row_action, tones[index], &mut needs),
            None => write_action_component(&mut parts, index, intent, spec, tones[index], &mut needs),
        }
        parts.blank();
    }
    for (index, (channel, spec)) in streams.iter().enumerate() {
        write_stream_component(&mut parts, index, channel, spec, &mut needs);
        parts.blank();
    }
    for (index, (name, spec)) in slots.iter().enumerate() {
        write_slot_component(&mut parts, index, name, spec, &mut needs);
        parts.blank();
    }

    let mut card = Writer::default();
    let heading = title_prop(props_spec);
    match heading {
        Some(name) => {
            needs.hook(Hook::Props);
            needs.helper(Helper::At);
            needs.helper(Helper::AsText);
            card.line(
                3,
                &format!(
                    "<h1 style={{styles.title}}>{{asText(at(props, {}))}}</h1>",
                    js_string(name)
                ),
            );
        }
        None => card.line(
            3,
            &format!(
                "<h1 style={{styles.title}}>{}</h1>",
                jsx_text(&title_from_intent(intent))
            ),
        ),
    }
    let showed_props = write_prop_sections(&mut card, 3, props_spec, heading, &row_actions, &mut needs);
    for index in 0..streams.len() {
        card.line(3, &format!("<Stream{index} />"));
    }
    if !slots.is_empty() {
        write_slots_section(&mut card, 3, slots.len());
    }
    // Forms first, then the bare buttons together in one bar at the bottom of the card.
    let (buttons, forms): (Vec<usize>, Vec<usize>) = (0..actions.len())
        .filter(|index| row_action_at(*index).is_none())
        .partition(|index| is_button_only(actions[*index].1));
    for index in forms {
        card.line(3, &format!("<Action{index} />"));
    }
    // At most two buttons at the bottom, the primary one and the first other, in declared order
    // (the inline-card convention hosts teach); the rest wait behind "More actions".
    let (bar, more) = bottom_bar(&buttons, &tones);
    if !bar.is_empty() {
        card.line(3, "<div style={styles.actions}>");
        for index in bar {
            card.line(4, &format!("<Action{index} />"));
        }
        card.line(3, "</div>");
    }
    if !more.is_empty() {
        card.line(3, "<details data-more-actions={true} style={styles.more}>");
        card.line(4, "<summary style={styles.moreSummary}>{\"More actions\"}</summary>");
        card.line(4, "<div style={styles.actions}>");
        for index in more {
            card.line(5, &format!("<Action{index} />"));
        }
        card.line(4, "</div>");
        card.line(3, "</details>");
    }
    if !showed_props && actions.is_empty() && streams.is_empty() && slots.is_empty() {
        card.line(3, "<p style={styles.hint}>{\"Nothing to show yet.\"}</p>");
    }

    let mut module = Writer::default();
    module.line(
        0,
        "// Generated by the svc built-in generator from the agreed data contract.",
    );
    module.line(
        0,
        "// Styled only through the theme's CSS variables, so the host theme restyles it.",
    );
    write_imports(&mut module, &needs);
    module.blank();
    write_styles(&mut module, Variance::read(variance));
    for helper in needs.helpers() {
        module.blank();
        module.raw(helper.source());
    }
    module.blank();
    module.raw(&parts.finish());
    module.line(0, "export default function GeneratedCard(): ReactNode {");
    if needs.hooks().any(|hook| hook == Hook::Props) {
        module.line(1, "const props: unknown = useProps<Record<string, unknown>>() ?? {};");
    }
    module.line(1, "return (");
    module.line(2, "<main style={styles.root}>");
    module.raw(&card.finish());
    module.line(2, "</main>");
    module.line(1, ");");
    module.line(0, "}");
    module.finish()
}

/// The bare buttons split into the bottom bar (at most two: the primary one and the first other,
/// in declared order) and the rest.
fn bottom_bar(buttons: &[usize], tones: &[Tone]) -> (Vec<usize>, Vec<usize>) {
    let mut chosen: Vec<usize> = match buttons.iter().copied().find(|index| tones[*index] == Tone::Primary) {
        Some(primary) => std::iter::once(primary)
            .chain(buttons.iter().copied().find(|index| *index != primary))
            .collect(),
        None => buttons.iter().copied().take(2).collect(),
    };
    chosen.sort_unstable();
    let more = buttons
        .iter()
        .copied()
        .filter(|index| !chosen.contains(index))
        .collect();
    (chosen, more)
}

fn write_imports(module: &mut Writer, needs: &Needs) {
    let (react, gadgets): (Vec<Hook>, Vec<Hook>) = needs.hooks().partition(|hook| hook.is_react());
    let names = |hooks: &[Hook]| hooks.iter().map(|hook| hook.name()).collect::<Vec<_>>().join(", ");
    if !react.is_empty() {
        module.line(0, &format!("import {{ {} }} from \"react\";", names(&react)));
    }
    module.line(0, "import type { CSSProperties, ReactNode } from \"react\";");
    // The hooks, then the kit's components: the same imports a language model's card writes.
    let gadget_names: Vec<&str> = gadgets
        .iter()
        .map(|hook| hook.name())
        .chain(needs.kit_components().map(|component| component.name()))
        .collect();
    if !gadget_names.is_empty() {
        module.line(
            0,
            &format!(
                "import {{ {} }} from {};",
                gadget_names.join(", "),
                js_string(GADGETS_PACKAGE)
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bottom_bar_holds_the_primary_action_and_one_other() {
        let tones = [Tone::Secondary, Tone::Primary, Tone::Danger, Tone::Secondary];
        assert_eq!(bottom_bar(&[0, 1, 2, 3], &tones), (vec![0, 1], vec![2, 3]));
        assert_eq!(bottom_bar(&[2, 3], &tones), (vec![2, 3], vec![]));
        assert_eq!(bottom_bar(&[1, 2], &tones), (vec![1, 2], vec![]));
        assert_eq!(bottom_bar(&[3, 1], &tones), (vec![1, 3], vec![]));
    }
}
