/** The builder's step cards: a card per step with its fields (a block holds its own step lists), the hint under an argument field, and what typing in a field does to its step. */
import {
  OPS,
  argFields,
  argText,
  blockWarning,
  describeSchema,
  parseArgText,
  savedVars,
  setArg,
  stepAt,
  stepPath,
  type CallStep,
  type MethodInfo,
  type MethodLookup,
  type Step,
  type Workflow,
} from '../builder-model/index.js';
import { h, newId } from './dom.js';

const KIND_TITLE: Record<string, string> = { wait: 'Wait', pause: 'Pause', repeat: 'Repeat', if: 'If' };
const SAFETY_BADGE: Record<string, string> = { readonly: 'text-bg-success', idempotent: 'text-bg-secondary', hazardous: 'text-bg-danger' };

/** A step list's cards, one per step (blocks hold their own lists). */
export function fillList(list: HTMLElement, path: string, steps: Step[], lookup: MethodLookup) {
  list.replaceChildren(...steps.map((s, i) => stepCard(s, stepPath(path, i), i, steps.length, lookup)));
  list.dataset.empty = path.includes('.') ? 'Drop or add steps here' : 'No steps yet: click a method on the left, or drag it here';
}

function stepCard(step: Step, path: string, index: number, count: number, lookup: MethodLookup): HTMLElement {
  const head = h('div', { class: 'wf-step-head d-flex align-items-center gap-1' });
  head.append(h('span', { class: 'wf-handle', title: 'Drag to move', 'aria-hidden': 'true' }, '⠿'));
  const body = h('div', { class: 'wf-step-body' });
  const card = h('div', { class: `wf-step wf-kind-${step.kind}`, 'data-path': path }, head, body);
  if (step.kind === 'call') {
    const m = lookup(step.instrument, step.method);
    head.append(h('code', { class: 'wf-step-title' }, `${step.instrument}.${step.method}`));
    if (m && m.safety === 'hazardous') head.append(h('span', { class: `badge ${SAFETY_BADGE[m.safety]}` }, 'hazardous'));
    callFields(body, step, m);
  } else {
    head.append(h('strong', { class: 'wf-step-title' }, KIND_TITLE[step.kind] ?? String((step as { kind: unknown }).kind)));
    blockFields(body, step, path, lookup);
    const warning = blockWarning(step);
    if (warning) body.append(h('div', { class: 'small text-warning-emphasis wf-block-warning' }, warning));
  }
  head.append(
    h('span', { class: 'ms-auto' }),
    h('button', { type: 'button', class: 'btn btn-sm btn-link p-0 px-1', 'data-action': 'up', title: 'Move up', 'aria-label': 'Move up', disabled: index === 0 }, '↑'),
    h('button', { type: 'button', class: 'btn btn-sm btn-link p-0 px-1', 'data-action': 'down', title: 'Move down', 'aria-label': 'Move down', disabled: index === count - 1 }, '↓'),
    h('button', { type: 'button', class: 'btn-close btn-sm ms-1', 'data-action': 'delete', title: 'Delete this step', 'aria-label': 'Delete step' }),
  );
  body.append(
    h('input', { class: 'form-control form-control-sm wf-label mt-1', 'data-prop': 'label', 'data-field': 'label', value: step.label ?? '', placeholder: 'Note (optional)', 'aria-label': 'Note' }),
  );
  body.append(h('div', { class: 'wf-step-errors' }));
  return card;
}

/** One labelled text field with its hint and error places. */
function field(label: Node[], input: HTMLInputElement | HTMLSelectElement, field: string, extra?: Node): HTMLElement {
  const id = newId();
  input.id = id;
  input.dataset.field = field;
  return h(
    'div',
    { class: 'wf-field' },
    h('label', { for: id, class: 'form-label small mb-0' }, ...label),
    input,
    extra,
    h('div', { class: 'wf-hint small' }),
    h('div', { class: 'wf-field-errors', 'data-errors-for': field }),
  );
}

function callFields(body: HTMLElement, step: CallStep, m: MethodInfo | undefined) {
  if (!m) {
    body.append(h('div', { class: 'small text-warning-emphasis mb-1' }, `${step.instrument}.${step.method} is not on the deck now: its arguments are shown as JSON.`));
  } else if (m.description) {
    body.append(h('div', { class: 'small text-body-secondary mb-1' }, m.description));
  }
  const fields = argFields(m?.params);
  const args = step.args ?? {};
  // arguments the document has but the schema does not name (a changed driver): shown so nothing is lost
  for (const name of Object.keys(args)) if (!fields.some((f) => f.name === name)) fields.push({ name, schema: {}, required: false });
  const grid = h('div', { class: 'wf-args' });
  for (const f of fields) {
    const schema = m && Object.keys(f.schema).length ? f.schema : null;
    const input = h('input', {
      class: 'form-control form-control-sm',
      'data-prop': 'arg',
      'data-arg': f.name,
      value: argText(args[f.name], schema),
      placeholder: schema && 'default' in schema ? `default ${JSON.stringify(schema.default)}` : 'value, #parameter or $variable',
      list: 'wf-refs',
      autocomplete: 'off',
      spellcheck: 'false',
    });
    let extra: Node | undefined;
    if (schema && Array.isArray(schema.enum)) {
      const dl = h('datalist', { id: newId() }, ...schema.enum.map((v) => h('option', { value: argText({ value: v }, schema) })));
      input.setAttribute('list', dl.id);
      extra = dl;
    }
    const label = [
      h('code', {}, f.name),
      f.required ? h('span', { class: 'text-danger', title: 'required' }, ' *') : null,
      h('span', { class: 'text-body-secondary' }, ` ${schema ? describeSchema(schema) : 'JSON'}`),
    ].filter((x): x is HTMLElement => !!x);
    const el = field(label, input, `args.${f.name}`, extra);
    if (schema && typeof schema.description === 'string') el.querySelector('label')!.title = schema.description;
    grid.append(el);
  }
  if (!fields.length) grid.append(h('div', { class: 'small text-body-secondary' }, 'No arguments.'));
  body.append(grid);
  const save = h('input', { class: 'form-control form-control-sm', 'data-prop': 'save_as', value: step.save_as ?? '', placeholder: 'e.g. mass', autocomplete: 'off', spellcheck: 'false' });
  body.append(field([document.createTextNode('Save result as '), h('span', { class: 'text-body-secondary' }, '(a variable: $name, or an output)')], save, 'save_as'));
}

function blockFields(body: HTMLElement, step: Step, path: string, lookup: MethodLookup) {
  const num = (prop: string, value: number, min: number, step_ = 'any') =>
    h('input', { class: 'form-control form-control-sm wf-num', type: 'number', min, step: step_, 'data-prop': prop, value: String(value ?? '') });
  switch (step.kind) {
    case 'wait':
      body.append(field([document.createTextNode('Seconds')], num('seconds', step.seconds, 0), 'seconds'));
      break;
    case 'pause':
      body.append(
        field(
          [document.createTextNode('Message for the operator')],
          h('input', { class: 'form-control form-control-sm', 'data-prop': 'message', value: step.message ?? '', placeholder: 'e.g. Change the vial, then resume' }),
          'message',
        ),
      );
      break;
    case 'input': {
      const text = (prop: string, value: string, placeholder: string) => h('input', { class: 'form-control form-control-sm', 'data-prop': prop, value, placeholder, autocomplete: 'off' });
      const sc = (step.schema ?? { type: 'number' }) as Record<string, unknown>;
      const str = (k: string) => (sc[k] === undefined ? '' : Array.isArray(sc[k]) ? (sc[k] as string[]).join(', ') : String(sc[k]));
      const type = h(
        'select',
        { class: 'form-select form-select-sm', 'data-prop': 'input-type', 'aria-label': 'Type of value' },
        ...['number', 'integer', 'string', 'boolean', 'file'].map((t) => h('option', { value: t, selected: sc.type === t }, t)),
      );
      body.append(field([document.createTextNode('Prompt for the person')], text('prompt', step.prompt ?? '', 'e.g. Read the pH of the sample'), 'prompt'));
      body.append(field([document.createTextNode('Save the value as '), h('span', { class: 'text-body-secondary' }, '(a variable)')], text('save_as', step.save_as ?? '', 'e.g. pH'), 'save_as'));
      body.append(field([document.createTextNode('Type')], type, 'schema.type'));
      if (sc.type === 'number' || sc.type === 'integer') {
        body.append(field([document.createTextNode('Minimum')], text('input-minimum', str('minimum'), 'none'), 'schema.minimum'));
        body.append(field([document.createTextNode('Maximum')], text('input-maximum', str('maximum'), 'none'), 'schema.maximum'));
        body.append(field([document.createTextNode('Unit')], text('input-unit', str('unit'), 'e.g. mg'), 'schema.unit'));
      } else if (sc.type === 'string') {
        body.append(
          field(
            [document.createTextNode('Choices '), h('span', { class: 'text-body-secondary' }, '(comma-separated; empty: any text)')],
            text('input-enum', str('enum'), 'e.g. clear, cloudy'),
            'schema.enum',
          ),
        );
      } else if (sc.type === 'file') {
        body.append(field([document.createTextNode('Accept')], text('input-accept', str('accept'), 'e.g. .csv,image/*'), 'schema.accept'));
        body.append(field([document.createTextNode('Largest file, bytes')], text('input-max_bytes', str('max_bytes'), 'e.g. 1000000'), 'schema.max_bytes'));
      }
      break;
    }
    case 'repeat':
      body.append(field([document.createTextNode('Times')], num('times', step.times, 0, '1'), 'times'));
      body.append(nested(`${path}.steps`, step.steps, 'Steps to repeat', lookup));
      break;
    case 'if': {
      const side = (which: 'left' | 'right') => {
        const input = h('input', {
          class: 'form-control form-control-sm',
          'data-prop': `cond-${which}`,
          value: argText(step.condition?.[which]),
          placeholder: which === 'left' ? '$variable' : 'value',
          list: 'wf-refs',
          autocomplete: 'off',
          'aria-label': which === 'left' ? 'Left side' : 'Right side',
        });
        input.dataset.field = `condition.${which}`;
        return input;
      };
      const op = h(
        'select',
        { class: 'form-select form-select-sm wf-op', 'data-prop': 'cond-op', 'aria-label': 'Comparison' },
        ...OPS.map((o) => h('option', { value: o, selected: step.condition?.op === o }, o)),
      );
      op.dataset.field = 'condition.op';
      body.append(
        h('div', { class: 'wf-cond d-flex gap-1 align-items-center' }, side('left'), op, side('right')),
        h('div', { class: 'wf-field-errors', 'data-errors-for': 'condition.left' }),
        h('div', { class: 'wf-field-errors', 'data-errors-for': 'condition.op' }),
        h('div', { class: 'wf-field-errors', 'data-errors-for': 'condition.right' }),
        h('div', { class: 'wf-field-errors', 'data-errors-for': 'condition' }),
        nested(`${path}.then`, step.then, 'then', lookup),
        nested(`${path}.else`, step.else ?? [], 'else', lookup),
      );
      break;
    }
  }
}

function nested(path: string, steps: Step[], title: string, lookup: MethodLookup): HTMLElement {
  const list = h('div', { class: 'wf-steps wf-nested', 'data-list': path });
  fillList(list, path, steps, lookup);
  return h('div', { class: 'wf-branch' }, h('div', { class: 'small text-body-secondary' }, title), list);
}

/** The hint under an argument field: what the text means, or why it does not fit. */
export function hintArg(input: HTMLInputElement, doc: Workflow, lookup: MethodLookup) {
  const hint = input.parentElement?.querySelector<HTMLElement>('.wf-hint');
  if (!hint) return;
  const card = input.closest<HTMLElement>('.wf-step');
  const step = card ? stepAt(doc, card.dataset.path!) : null;
  if (!step || step.kind !== 'call') return;
  const schema = argSchema(step, input.dataset.arg!, lookup);
  const { arg, problem } = parseArgText(input.value, schema);
  hint.className = 'wf-hint small';
  hint.textContent = '';
  if (problem) {
    hint.classList.add('text-warning-emphasis');
    hint.textContent = problem;
  } else if (arg && 'param' in arg) {
    const p = doc.parameters.find((x) => x.name === arg.param);
    hint.classList.add('text-info-emphasis');
    hint.textContent = p ? `parameter ${p.name} (${p.type})` : `new parameter ${arg.param}`;
  } else if (arg && 'var' in arg) {
    const known = savedVars(doc).includes(arg.var);
    hint.classList.add(known ? 'text-info-emphasis' : 'text-warning-emphasis');
    hint.textContent = known ? `the value saved as ${arg.var}` : `no step saves "${arg.var}" yet (give a step "Save result as ${arg.var}")`;
  }
}

/** Every argument field's hint. */
export function hintAll(root: HTMLElement, doc: Workflow, lookup: MethodLookup) {
  for (const input of root.querySelectorAll<HTMLInputElement>('input[data-prop="arg"]')) hintArg(input, doc, lookup);
}

/** The schema the deck gives a call's argument, if any. */
function argSchema(step: CallStep, arg: string, lookup: MethodLookup) {
  const f = argFields(lookup(step.instrument, step.method)?.params).find((x) => x.name === arg);
  return f && Object.keys(f.schema).length ? f.schema : null;
}

/** Typing in a step's field (`data-prop`): the step changes in place. */
export function editStep(step: Step, el: HTMLInputElement, doc: Workflow, lookup: MethodLookup) {
  const v = el.value;
  const prop = el.dataset.prop!;
  const numeric = () => (v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : (v as unknown as number));
  if (prop === 'label') step.label = v;
  else if (step.kind === 'call' && prop === 'arg') {
    setArg(step, el.dataset.arg!, parseArgText(v, argSchema(step, el.dataset.arg!, lookup)).arg);
    hintArg(el, doc, lookup);
  } else if (step.kind === 'call' && prop === 'save_as') {
    const name = v.trim();
    if (name) step.save_as = name;
    else delete step.save_as;
  } else if (step.kind === 'wait' && prop === 'seconds') step.seconds = numeric();
  else if (step.kind === 'repeat' && prop === 'times') step.times = numeric();
  else if (step.kind === 'pause' && prop === 'message') step.message = v;
  else if (step.kind === 'input') editInput(step, prop, v);
  else if (step.kind === 'if') {
    if (prop === 'cond-op') step.condition.op = v as typeof step.condition.op;
    else if (prop === 'cond-left' || prop === 'cond-right') {
      const arg = parseArgText(v, null).arg ?? { value: '' };
      step.condition[prop === 'cond-left' ? 'left' : 'right'] = arg;
    }
  }
}

/** Typing in an input step's field: its prompt, variable, or schema (a new type keeps no fields of the old one). */
function editInput(step: Extract<Step, { kind: 'input' }>, prop: string, v: string) {
  const schema = { ...(step.schema ?? { type: 'number' }) } as Record<string, unknown>;
  if (prop === 'prompt') step.prompt = v;
  else if (prop === 'save_as') step.save_as = v.trim();
  else if (prop === 'input-type') step.schema = { type: v } as typeof step.schema;
  else if (prop.startsWith('input-')) {
    const key = prop.slice(6);
    const text = v.trim();
    if (!text) delete schema[key];
    else if (key === 'enum')
      schema[key] = text
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    else if (key === 'unit' || key === 'accept') schema[key] = text;
    else schema[key] = Number.isFinite(Number(text)) ? Number(text) : text;
    step.schema = schema as typeof step.schema;
  }
}
