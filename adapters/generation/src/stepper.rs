//! Multi-step contracts: props with the current `step` (an integer, 1-based) and the `steps`
//! (an array of step names) show a stepper, "Step 2 of 3" with every step named and the current
//! one marked, instead of an editable number. The agent moves the steps: the card's `next` and
//! `back` actions are its Next and Back buttons, and `svc_update` repaints the new step.

use serde_json::Value;

use crate::helpers::Helper;
use crate::needs::{Hook, Needs};
use crate::schema_kind::{SchemaKind, classify};
use crate::tsx_text::{Writer, js_string};

/// Names of the current step prop, in order of preference.
const STEP_PROPS: &[&str] = &["step", "current_step", "currentStep"];
/// Names of the step list prop.
const STEPS_PROPS: &[&str] = &["steps"];

/// The stepper's two props: the current step and the step names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stepper<'a> {
    pub step: &'a str,
    pub steps: &'a str,
}

impl Stepper<'_> {
    pub(crate) fn owns(&self, name: &str) -> bool {
        name == self.step || name == self.steps
    }
}

/// The stepper of `props_spec`, when it declares an integer step and an array of step names.
pub(crate) fn find_stepper(props_spec: &Value) -> Option<Stepper<'_>> {
    let properties = props_spec.get("properties")?.as_object()?;
    let step = STEP_PROPS.iter().copied().find(|name| {
        properties
            .get(*name)
            .is_some_and(|schema| matches!(classify(schema), SchemaKind::Number { integer: true }))
    })?;
    let steps = STEPS_PROPS.iter().copied().find(|name| {
        properties.get(*name).is_some_and(|schema| match classify(schema) {
            SchemaKind::ArrayOfScalars(items) => matches!(classify(items), SchemaKind::Text(_)),
            _ => false,
        })
    })?;
    Some(Stepper { step, steps })
}

/// Writes the stepper: "Step N of M" and the ordered step names, the current one marked.
pub(crate) fn write_stepper(writer: &mut Writer, indent: usize, stepper: Stepper<'_>, needs: &mut Needs) {
    needs.hook(Hook::Props);
    needs.helper(Helper::At);
    needs.helper(Helper::AsRows);
    needs.helper(Helper::AsText);
    let step = format!("at(props, {})", js_string(stepper.step));
    let steps = format!("asRows(at(props, {}))", js_string(stepper.steps));
    writer.line(
        indent,
        "<nav aria-label=\"Progress\" data-stepper style={styles.section}>",
    );
    writer.line(
        indent + 1,
        &format!("<span style={{styles.sectionTitle}}>{{`Step ${{asText({step})}} of ${{{steps}.length}}`}}</span>"),
    );
    writer.line(indent + 1, "<ol style={styles.steps}>");
    writer.line(indent + 2, &format!("{{{steps}.map((name, index) => ("));
    writer.line(
        indent + 3,
        &format!(
            "<li key={{index}} aria-current={{index + 1 === {step} ? \"step\" : undefined}} style={{index + 1 === {step} ? styles.stepCurrent : index + 1 < Number({step}) ? styles.stepDone : styles.step}}>"
        ),
    );
    writer.line(indent + 4, "{asText(name)}");
    writer.line(indent + 3, "</li>");
    writer.line(indent + 2, "))}");
    writer.line(indent + 1, "</ol>");
    writer.line(indent, "</nav>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_step_number_beside_step_names_is_a_stepper() {
        let props = json!({ "properties": { "step": { "type": "integer" }, "steps": { "type": "array", "items": { "type": "string" } } } });
        assert_eq!(
            find_stepper(&props),
            Some(Stepper {
                step: "step",
                steps: "steps"
            })
        );
        let no_names = json!({ "properties": { "step": { "type": "integer" } } });
        assert_eq!(find_stepper(&no_names), None);
    }
}
