/**
 * The run page's form for a waiting input step (issue 31): drawn from the runner's status (`input`) each time
 * it changes, posted as JSON to /executions/input; a value that does not fit shows the server's message under
 * the field, and the run keeps waiting.
 */
type Schema = { type: string; minimum?: number; maximum?: number; unit?: string; enum?: string[]; accept?: string };
export type WaitingInput = { task_id: number; step_id: number; prompt: string; save_as: string; schema: Schema; expects: string };

function make<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text = ''): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text) e.textContent = text;
  return e;
}

/** The field for a schema: a number box (with its range), a list of choices, yes/no, a text, a file. */
function field(s: Schema): HTMLInputElement | HTMLSelectElement {
  const cls = 'form-control form-control-sm';
  if (s.type === 'boolean' || (s.type === 'string' && s.enum)) {
    const sel = make('select', { class: 'form-select form-select-sm', name: 'value', id: 'input-value' });
    const choices =
      s.type === 'boolean'
        ? [
            ['true', 'yes'],
            ['false', 'no'],
          ]
        : s.enum!.map((c) => [c, c]);
    for (const [v, label] of choices) sel.append(make('option', { value: v }, label));
    return sel;
  }
  const input = make('input', { class: cls, name: 'value', id: 'input-value', required: '', autocomplete: 'off' });
  if (s.type === 'number' || s.type === 'integer') {
    input.type = 'number';
    input.step = s.type === 'integer' ? '1' : 'any';
    if (s.minimum !== undefined) input.min = String(s.minimum);
    if (s.maximum !== undefined) input.max = String(s.maximum);
  } else if (s.type === 'file') {
    input.type = 'file';
    input.name = 'file';
    if (s.accept) input.accept = s.accept;
  }
  return input;
}

/** Draw (or clear) the form in `box` for the input the status says waits; kept as it is while it is the same. */
export function showInputForm(box: HTMLElement, input: WaitingInput | null | undefined, url: string) {
  if (!input) {
    box.replaceChildren();
    delete box.dataset.step;
    return;
  }
  if (box.dataset.step === String(input.step_id)) return; // the same input: keep what is typed
  box.dataset.step = String(input.step_id);
  const form = make('form', { method: 'post', action: url, class: 'alert alert-warning py-2', id: 'input-form' });
  if (input.schema.type === 'file') form.enctype = 'multipart/form-data';
  const label = make('label', { for: 'input-value', class: 'form-label mb-1' });
  label.append(make('strong', {}, input.prompt), ` (${input.save_as}: ${input.expects})`);
  const f = field(input.schema);
  const task = make('input', { type: 'hidden', name: 'task_id', value: String(input.task_id) });
  const errors = make('div', { class: 'small text-danger', id: 'input-error', role: 'alert' });
  const row = make('div', { class: 'd-flex gap-2 align-items-center' });
  row.append(f, ...(input.schema.unit ? [make('span', {}, input.schema.unit)] : []), make('button', { type: 'submit', class: 'btn btn-sm btn-primary' }, 'Give'));
  form.append(label, row, errors, task);
  form.addEventListener('submit', (e) => {
    if (input.schema.type === 'file') return; // a plain multipart post
    e.preventDefault();
    void fetch(url, {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
      credentials: 'same-origin',
      body: JSON.stringify({ value: f.value, task_id: input.task_id }),
    }).then(async (r) => {
      if (r.ok) return void (errors.textContent = '');
      const j = (await r.json().catch(() => ({}))) as { error?: { message?: string } };
      errors.textContent = j.error?.message ?? `Failed (${r.status}).`;
    });
  });
  box.replaceChildren(form);
}
