//! The life of one gesture in a generated action component: sending (the button is disabled and
//! says so), sent (the server stored it for the agent; the card names what was sent), or refused
//! (the server named the fields that broke the action's schema; each shows its error inline and
//! the person may send again). A gesture sends once: a ref blocks a second click that arrives
//! before React re-renders. An action is sent for the props it was sent from: when the agent
//! repaints the card (`svc_update`, say to the next step) its buttons are live again.

use crate::helpers::Helper;
use crate::needs::{Hook, Needs};
use crate::tsx_text::{Writer, js_string};

/// Declares `submit`, `send(...data)`, and the derived `sending`, `sent` (the text of what was
/// sent, or null), `refused` and `errors` of one action component.
pub(crate) fn write_send_state(writer: &mut Writer, intent_literal: &str, needs: &mut Needs) {
    needs.hook(Hook::Action);
    needs.hook(Hook::State);
    needs.hook(Hook::Ref);
    needs.hook(Hook::Props);
    needs.helper(Helper::DescribeSent);
    needs.helper(Helper::FieldErrors);
    writer.line(1, &format!("const submit = useAction({intent_literal});"));
    writer.line(1, "const current: unknown = useProps<unknown>();");
    writer.line(1, "const once = useRef<{ props: unknown } | null>(null);");
    writer.line(
        1,
        "const [status, setStatus] = useState<{ props: unknown; phase: \"sending\" | \"sent\" | \"refused\"; text: string; message: string; errors: Record<string, string> } | null>(null);",
    );
    writer.line(
        1,
        "const shown = status !== null && status.props === current ? status : null;",
    );
    writer.line(1, "const sending = shown !== null && shown.phase === \"sending\";");
    writer.line(
        1,
        "const sent: string | null = shown !== null && shown.phase === \"sent\" ? shown.text : null;",
    );
    writer.line(
        1,
        "const refused = shown !== null && shown.phase === \"refused\" ? shown : null;",
    );
    writer.line(
        1,
        "const errors: Record<string, string> = refused !== null ? refused.errors : {};",
    );
    writer.line(1, "const send = (...data: [] | [unknown]): void => {");
    writer.line(
        2,
        "if (once.current !== null && once.current.props === current) return;",
    );
    writer.line(2, "const props = current;");
    writer.line(2, "once.current = { props };");
    writer.line(2, "const text = data.length === 0 ? \"\" : describeSent(data[0]);");
    writer.line(
        2,
        "setStatus({ props, phase: \"sending\", text, message: \"\", errors: {} });",
    );
    writer.line(2, "void submit(...data).then((outcome) => {");
    writer.line(3, "if (outcome.ok) {");
    writer.line(
        4,
        "setStatus({ props, phase: \"sent\", text, message: \"\", errors: {} });",
    );
    writer.line(4, "return;");
    writer.line(3, "}");
    writer.line(
        3,
        "// Refused: nothing reached the agent, so the person may fix it and send again.",
    );
    writer.line(3, "once.current = null;");
    writer.line(
        3,
        "setStatus({ props, phase: \"refused\", text, message: outcome.message, errors: fieldErrors(outcome.violations) });",
    );
    writer.line(2, "});");
    writer.line(1, "};");
}

/// The attributes of the button that sends: its intent and tone for tests, disabled while the
/// gesture is in flight or done.
pub(crate) fn button_attributes(intent_literal: &str, tone_name: &str, tone_style: &str) -> String {
    format!(
        "data-intent={{{intent_literal}}} data-tone=\"{tone_name}\" style={{{tone_style}}} disabled={{sending || sent !== null}} aria-busy={{sending}}"
    )
}

/// The status line: sending, what was sent (and for forms a way to send again on purpose), or
/// why the server refused it.
pub(crate) fn write_status(writer: &mut Writer, indent: usize, action: &str, can_resend: bool) {
    let sending_label = js_string(&format!("Sending: {action}…"));
    let sent_label = js_string(&format!("Sent: {action}"));
    let refused_label = js_string(&format!("Not sent: {action}"));
    writer.line(
        indent,
        &format!("{{sending && <span role=\"status\" style={{styles.status}}>{{{sending_label}}}</span>}}"),
    );
    writer.line(
        indent,
        &format!(
            "{{sent !== null && <span role=\"status\" style={{styles.status}}>{{sent === \"\" ? {sent_label} : `${{{sent_label}}} — ${{sent}}`}}</span>}}"
        ),
    );
    writer.line(
        indent,
        &format!(
            "{{refused !== null && <span role=\"alert\" data-refused={{true}} style={{styles.error}}>{{`${{{refused_label}}} — ${{refused.message}}`}}</span>}}"
        ),
    );
    if can_resend {
        writer.line(
            indent,
            "{sent !== null && <button type=\"button\" data-send-again={true} style={styles.secondaryButton} onClick={() => { once.current = null; setStatus(null); }}>{\"Send again\"}</button>}",
        );
    }
}

/// The inline error of the control at `error_key` (a JSON Pointer without its leading slash; ""
/// for the whole value), shown under it and tied to it by `aria-describedby`.
pub(crate) fn write_field_error(writer: &mut Writer, indent: usize, error_key: &str, error_id: &str) {
    let key = js_string(error_key);
    writer.line(
        indent,
        &format!(
            "{{errorAt(errors, {key}) !== undefined && <span id=\"{error_id}\" role=\"alert\" data-field-error={{{key}}} style={{styles.error}}>{{errorAt(errors, {key})}}</span>}}"
        ),
    );
}

/// Attributes marking a control invalid while the server's refusal names it.
pub(crate) fn invalid_attributes(error_key: &str, error_id: &str) -> String {
    let key = js_string(error_key);
    format!(
        " aria-invalid={{errorAt(errors, {key}) !== undefined}} aria-describedby={{errorAt(errors, {key}) !== undefined ? \"{error_id}\" : undefined}}"
    )
}
