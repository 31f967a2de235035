//! Row actions: an action whose data is exactly a few columns of a table in the props (say
//! `open_order` taking `order_id`, beside an `orders` table with an `order_id` column) becomes a
//! button on every row, sending that row's values, instead of a form where the person types an id.

use serde_json::Value;

use crate::action_forms::Tone;
use crate::helpers::Helper;
use crate::needs::{Hook, Needs};
use crate::schema_kind::{SchemaKind, classify, declared_entries, is_scalar, required_names};
use crate::tsx_text::{Writer, humanize, js_string};

/// An action shown as a button on each row of the top-level table `prop`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RowAction<'a> {
    /// Position of the action in the contract (its component is `Action<index>`).
    pub index: usize,
    pub intent: &'a str,
    /// The action's properties, each a column of the table.
    pub keys: Vec<&'a str>,
    /// The top-level prop holding the table.
    pub prop: &'a str,
}

/// The actions of the contract that are row actions: an object schema whose properties are all
/// required scalars and all scalar columns of one top-level table (the first that has them all).
pub(crate) fn find_row_actions<'a>(props_spec: &'a Value, actions: &[(&'a str, &'a Value)]) -> Vec<RowAction<'a>> {
    let Some(properties) = props_spec.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let tables: Vec<(&str, &serde_json::Map<String, Value>)> = declared_entries(properties)
        .into_iter()
        .filter_map(|(name, schema)| match classify(schema) {
            SchemaKind::ArrayOfObjects(columns) => Some((name, columns)),
            _ => None,
        })
        .collect();
    let mut found = Vec::new();
    for (index, (intent, spec)) in actions.iter().enumerate() {
        let schema = spec.get("schema").unwrap_or(&Value::Null);
        let SchemaKind::Object(fields) = classify(schema) else {
            continue;
        };
        let required = required_names(schema);
        let keys: Vec<&str> = fields.keys().map(String::as_str).collect();
        let all_required_scalars = fields
            .iter()
            .all(|(key, field)| required.contains(&key.as_str()) && is_scalar(classify(field)));
        if !all_required_scalars {
            continue;
        }
        let table = tables.iter().find(|(_, columns)| {
            keys.iter()
                .all(|key| columns.get(*key).is_some_and(|column| is_scalar(classify(column))))
        });
        if let Some((prop, _)) = table {
            found.push(RowAction {
                index,
                intent,
                keys,
                prop,
            });
        }
    }
    found
}

/// Writes `function Action<index>({ row })`: a button sending the row's values, once.
pub(crate) fn write_row_action_component(writer: &mut Writer, action: &RowAction<'_>, tone: Tone, needs: &mut Needs) {
    needs.hook(Hook::Action);
    needs.hook(Hook::State);
    needs.hook(Hook::Ref);
    needs.helper(Helper::At);
    let intent_literal = js_string(action.intent);
    let data = action
        .keys
        .iter()
        .map(|key| format!("{}: at(row, {})", js_string(key), js_string(key)))
        .collect::<Vec<_>>()
        .join(", ");
    writer.line(
        0,
        &format!(
            "function Action{}({{ row }}: {{ row: unknown }}): ReactNode {{",
            action.index
        ),
    );
    writer.line(1, &format!("const submit = useAction({intent_literal});"));
    // Sent for this row object; a repaint with new rows makes the button live again. A refusal
    // lets the person click again.
    writer.line(1, "const once = useRef<unknown>(null);");
    writer.line(
        1,
        "const [status, setStatus] = useState<{ row: unknown; phase: \"sending\" | \"sent\" | \"refused\"; message: string } | null>(null);",
    );
    writer.line(
        1,
        "const phase = status !== null && status.row === row ? status.phase : null;",
    );
    writer.line(1, "const onClick = (): void => {");
    writer.line(2, "if (once.current !== null && once.current === row) return;");
    writer.line(2, "once.current = row;");
    writer.line(2, "setStatus({ row, phase: \"sending\", message: \"\" });");
    writer.line(2, &format!("void submit({{ {data} }}).then((outcome) => {{"));
    writer.line(3, "if (!outcome.ok) once.current = null;");
    writer.line(
        3,
        "setStatus({ row, phase: outcome.ok ? \"sent\" : \"refused\", message: outcome.ok ? \"\" : outcome.message });",
    );
    writer.line(2, "});");
    writer.line(1, "};");
    writer.line(1, "return (");
    writer.line(
        2,
        &format!(
            "<button type=\"button\" data-intent={{{intent_literal}}} data-tone=\"{}\" style={{{}}} disabled={{phase === \"sending\" || phase === \"sent\"}} \
             aria-busy={{phase === \"sending\"}} title={{phase === \"refused\" && status !== null ? status.message : undefined}} onClick={{onClick}}>",
            tone.name(),
            tone.style()
        ),
    );
    writer.line(
        3,
        &format!(
            "{{phase === \"sending\" ? {} : phase === \"sent\" ? {} : phase === \"refused\" ? {} : {}}}",
            js_string("Sending…"),
            js_string("Sent"),
            js_string("Not sent, retry"),
            js_string(&humanize(action.intent))
        ),
    );
    writer.line(2, "</button>");
    writer.line(1, ");");
    writer.line(0, "}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_action_taking_a_table_column_is_a_row_action() {
        let props = json!({ "properties": {
            "title": { "type": "string" },
            "orders": { "type": "array", "items": { "type": "object", "properties": { "order_id": { "type": "string" }, "total": { "type": "number" } } } }
        } });
        let open = json!({ "schema": { "type": "object", "required": ["order_id"], "properties": { "order_id": { "type": "string" } } } });
        let note = json!({ "schema": { "type": "object", "required": ["note"], "properties": { "note": { "type": "string" } } } });
        let optional = json!({ "schema": { "type": "object", "properties": { "order_id": { "type": "string" } } } });
        let actions = [("open_order", &open), ("add_note", &note), ("maybe", &optional)];
        let found = find_row_actions(&props, &actions);
        assert_eq!(
            found,
            vec![RowAction {
                index: 0,
                intent: "open_order",
                keys: vec!["order_id"],
                prop: "orders"
            }]
        );
    }
}
