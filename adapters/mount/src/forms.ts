// Form submission owned by the runtime. A card never navigates, and hosts that sandbox the
// frame without `allow-forms` block native submission outright (no `submit` event fires), so
// the runtime cancels the native activation, validates like the browser would, and dispatches
// the `submit` event itself; React's `onSubmit` handlers run as usual.

function submitterOf(target: EventTarget | null): HTMLButtonElement | HTMLInputElement | null {
  if (!(target instanceof Element)) return null;
  const control = target.closest('button, input');
  if (control instanceof HTMLButtonElement && control.type === 'submit' && !control.disabled) return control;
  if (control instanceof HTMLInputElement && (control.type === 'submit' || control.type === 'image') && !control.disabled) return control;
  return null;
}

function submit(form: HTMLFormElement, submitter: HTMLElement | null): void {
  if (!form.noValidate && !(submitter instanceof HTMLButtonElement && submitter.formNoValidate) && !form.reportValidity()) return;
  const event = typeof SubmitEvent === 'function'
    ? new SubmitEvent('submit', { bubbles: true, cancelable: true, submitter })
    : new Event('submit', { bubbles: true, cancelable: true });
  form.dispatchEvent(event);
}

/** Text-like inputs where Enter submits the form (implicit submission). */
const IMPLICIT_SUBMIT_TYPES = new Set(['text', 'search', 'url', 'tel', 'email', 'password', 'number', 'date', 'datetime-local', 'month', 'time', 'week']);

export function installFormSubmission(doc: Document): void {
  doc.addEventListener(
    'click',
    (event) => {
      const submitter = submitterOf(event.target);
      const form = submitter?.form;
      if (!submitter || !form) return;
      event.preventDefault();
      submit(form, submitter);
    },
    true,
  );
  doc.addEventListener(
    'keydown',
    (event) => {
      if (event.key !== 'Enter' || event.isComposing) return;
      const input = event.target;
      if (!(input instanceof HTMLInputElement) || !IMPLICIT_SUBMIT_TYPES.has(input.type) || !input.form) return;
      event.preventDefault();
      const form = input.form;
      const button = form.querySelector<HTMLElement>('button[type=submit], button:not([type]), input[type=submit]');
      submit(form, button);
    },
    true,
  );
}
