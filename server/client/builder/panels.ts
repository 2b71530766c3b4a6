/** The builder's side panels: the workflow's parameters, its outputs, and the #parameter / $variable suggestions. */
import { PARAM_TYPES, outputChoices, outputName, outputWarning, paramUsage, savedVars, type MethodLookup, type Workflow } from '../builder-model/index.js';
import { h, newId } from './dom.js';

/** The parameters panel: name, type and default of each, and how many steps use it. */
export function renderParams(box: HTMLElement, doc: Workflow) {
  const usage = paramUsage(doc);
  if (!doc.parameters.length) {
    box.replaceChildren(h('p', { class: 'small text-body-secondary mb-0' }, 'None yet. Type #name in an argument to make one, or press Add.'));
    return;
  }
  box.replaceChildren(
    ...doc.parameters.map((p, i) => {
      const used = usage.get(p.name) ?? 0;
      const type = h(
        'select',
        { class: 'form-select form-select-sm wf-ptype', 'data-pprop': 'type', 'aria-label': 'Type' },
        ...PARAM_TYPES.map((t) => h('option', { value: t, selected: p.type === t }, t)),
      );
      return h(
        'div',
        { class: 'wf-param', 'data-index': i },
        h(
          'div',
          { class: 'd-flex gap-1 align-items-center' },
          h('input', { class: 'form-control form-control-sm', 'data-pprop': 'name', value: p.name, 'aria-label': 'Parameter name', autocomplete: 'off', spellcheck: 'false' }),
          type,
          h('button', { type: 'button', class: 'btn-close btn-sm', 'data-action': 'remove-param', 'aria-label': `Remove parameter ${p.name}`, title: 'Remove' }),
        ),
        h('input', {
          class: 'form-control form-control-sm mt-1',
          'data-pprop': 'default',
          value: p.default === undefined ? '' : String(p.default),
          placeholder: 'Default (optional)',
          'aria-label': 'Default',
        }),
        h('div', { class: 'small text-body-secondary' }, used ? `used by ${used} step${used > 1 ? 's' : ''}` : 'not used yet'),
        h('div', { class: 'wf-field-errors', 'data-errors-for': `parameters[${i}]` }),
      );
    }),
  );
}

/** The outputs panel: a box per output main can save; returns the outputs offered. */
export function renderOutputs(box: HTMLElement, doc: Workflow, lookup: MethodLookup): string[] {
  const offered = outputChoices(doc, lookup);
  const names = [...offered, ...doc.outputs.map(outputName).filter((o) => !offered.includes(o))];
  if (!names.length) {
    box.replaceChildren(h('p', { class: 'small text-body-secondary mb-0' }, 'The values main steps save ("Save result as") can be reported as the outputs of each iteration.'));
    return offered;
  }
  box.replaceChildren(
    ...names.map((n) => {
      const id = newId();
      const i = doc.outputs.findIndex((o) => outputName(o) === n);
      const entry = doc.outputs[i] ?? n;
      const warning = outputWarning(doc, entry);
      const from = typeof entry === 'string' ? '' : ` ← ${entry.from}`;
      return h(
        'div',
        { class: 'form-check' },
        h('input', { class: 'form-check-input', type: 'checkbox', id, 'data-output': n, checked: i >= 0 }),
        h(
          'label',
          { class: 'form-check-label small', for: id },
          h('code', {}, n),
          from ? h('span', { class: 'text-body-secondary' }, from) : '',
          warning ? h('span', { class: 'text-warning-emphasis' }, ` ${warning}`) : '',
        ),
        i >= 0 ? h('div', { class: 'wf-field-errors', 'data-errors-for': `outputs[${i}]` }) : null,
      );
    }),
  );
  return offered;
}

/** Suggestions for argument fields: #parameters and $variables. */
export function renderRefs(root: HTMLElement, doc: Workflow) {
  let dl = document.getElementById('wf-refs');
  if (!dl) {
    dl = h('datalist', { id: 'wf-refs' });
    root.append(dl);
  }
  dl.replaceChildren(...doc.parameters.map((p) => h('option', { value: `#${p.name}` })), ...savedVars(doc).map((v) => h('option', { value: `$${v}` })));
}
