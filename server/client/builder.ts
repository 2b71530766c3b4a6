/**
 * The workflow builder page (server/views/workflows.tsx renders its skeleton and a JSON data island) and the
 * delete button of a workflow's page. Plain DOM code: the state is one workflow document, changed only
 * through builder-model.ts; a change of structure (add, move, delete) re-renders the step lists, typing in a
 * field updates the document in place (so focus stays). Does nothing on pages without the builder.
 */
import type SortableType from 'sortablejs';
import {
  NAME,
  NAME_RULE,
  OPS,
  PARAM_TYPES,
  PHASES,
  argFields,
  argText,
  declareMissingParams,
  describeSchema,
  insertStep,
  listLabel,
  listAt,
  moveStep,
  newBlock,
  newCall,
  normalise,
  paramUsage,
  parseArgText,
  parseDefault,
  placeError,
  removeStep,
  renameParam,
  outputChoices,
  blockWarning,
  tickNewOutputs,
  savedVars,
  setArg,
  setOutput,
  splitStepPath,
  stepAt,
  stepPath,
  toDocument,
  type BlockKind,
  type InstrumentInfo,
  type MethodInfo,
  type ParamType,
  type Step,
  type Workflow,
} from './builder-model/index.js';

type SortableCtor = typeof SortableType;
const sortableLib = () => (globalThis as { Sortable?: SortableCtor }).Sortable;

interface Detail {
  field?: string;
  message: string;
}

interface Data {
  name: string | null;
  version: number | null;
  workflow: unknown;
  instruments: InstrumentInfo[];
  urls: { list: string; base: string; run: string; campaign: string };
}

/* ----------------------------------------------------------- tiny DOM */

type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined>;

/** An element: `class` sets the class, `true` a bare attribute; false/null/undefined leave it out. */
function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    if (k === 'value' && (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement)) el.value = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

let uid = 0;
const newId = () => `wf-f${++uid}`;

const KIND_TITLE: Record<string, string> = { wait: 'Wait', pause: 'Pause', repeat: 'Repeat', if: 'If' };
const SAFETY_BADGE: Record<string, string> = { readonly: 'text-bg-success', idempotent: 'text-bg-secondary', hazardous: 'text-bg-danger' };

/* -------------------------------------------------------------- the page */

class Builder {
  private doc: Workflow;
  private name: string | null;
  private version: number | null;
  private saved: string;
  private target = 'main';
  private errors: Detail[] = [];
  private errorMessage = '';
  private sortables: SortableType[] = [];
  private saving = false;
  private readonly methods = new Map<string, MethodInfo>();

  constructor(
    private readonly root: HTMLElement,
    private readonly data: Data,
  ) {
    this.doc = normalise(data.workflow);
    this.name = data.name;
    this.version = data.version;
    this.saved = this.snapshot();
    for (const i of data.instruments) for (const m of i.methods) this.methods.set(`${i.name}.${m.name}`, m);
  }

  private lookup = (instrument: string, method: string) => this.methods.get(`${instrument}.${method}`);
  /** The outputs offered at the last render (a variable new since then gets ticked). */
  private offered: string[] = [];
  private snapshot = () => JSON.stringify(toDocument(this.doc));
  private $ = <T extends Element = HTMLElement>(sel: string) => this.root.querySelector<T>(sel);

  start() {
    const desc = this.$<HTMLTextAreaElement>('#wf-description')!;
    desc.value = this.doc.description;
    this.fitDescription();
    this.root.addEventListener('input', (e) => this.onInput(e));
    this.root.addEventListener('change', (e) => this.onChange(e));
    this.root.addEventListener('click', (e) => this.onClick(e));
    this.root.addEventListener('focusin', (e) => this.pickTarget(e.target as HTMLElement));
    window.addEventListener('beforeunload', (e) => {
      if (!this.dirty()) return;
      e.preventDefault();
      e.returnValue = ''; // older browsers need it to ask
    });
    this.initPalette();
    this.render();
    this.root.dataset.ready = 'true';
  }

  private dirty() {
    return this.snapshot() !== this.saved;
  }

  /* ------------------------------------------------------------ rendering */

  /** Everything that depends on the structure: step lists, parameters, outputs, JSON, errors. */
  private render() {
    for (const s of this.sortables) s.destroy();
    this.sortables = [];
    for (const phase of PHASES) {
      const list = this.$(`.wf-steps[data-list="${phase}"]`)!;
      this.fillList(list, phase, this.doc[phase]);
    }
    try {
      listAt(this.doc, this.target);
    } catch {
      this.target = 'main';
    }
    this.showTarget();
    this.hintAll();
    this.renderParams();
    this.renderOutputs();
    this.renderRefs();
    this.showErrors();
    this.refresh();
    const Sortable = sortableLib();
    if (Sortable) {
      for (const el of this.root.querySelectorAll<HTMLElement>('.wf-steps')) {
        this.sortables.push(
          Sortable.create(el, {
            group: 'wf-steps',
            handle: '.wf-handle',
            draggable: '.wf-step',
            animation: 150,
            // Sortable's own pointer handling (not native drag and drop): the same on mouse and touch, and
            // steady with nested lists
            forceFallback: true,
            fallbackOnBody: true,
            swapThreshold: 0.65,
            emptyInsertThreshold: 12,
            onEnd: (evt) => {
              const from = evt.from.dataset.list!;
              const to = evt.to.dataset.list!;
              if ((from === to && evt.oldIndex === evt.newIndex) || evt.oldIndex === undefined || evt.newIndex === undefined) return;
              moveStep(this.doc, from, evt.oldIndex, to, evt.newIndex);
              // Sortable has moved the element already; rebuild from the document once it is done.
              setTimeout(() => this.structural(), 0);
            },
          }),
        );
      }
    }
  }

  /** After a change of structure: old error paths no longer point at the same steps. */
  private structural(focus?: string) {
    this.errors = [];
    this.errorMessage = '';
    this.render();
    if (focus) {
      const card = this.$(`.wf-step[data-path="${focus}"]`);
      card?.scrollIntoView({ block: 'nearest' });
      card?.querySelector<HTMLElement>('input, select')?.focus();
    }
  }

  /** What follows any edit: the JSON view and the unsaved-changes state. */
  private refresh() {
    this.$('#wf-json')!.textContent = JSON.stringify(toDocument(this.doc), null, 2);
    const dirty = this.dirty();
    const status = this.$('#wf-status')!;
    if (!this.saving && dirty) status.textContent = 'Unsaved changes';
    else if (!this.saving && status.textContent === 'Unsaved changes') status.textContent = '';
    this.root.classList.toggle('wf-dirty', dirty);
  }

  private fillList(list: HTMLElement, path: string, steps: Step[]) {
    list.replaceChildren(...steps.map((s, i) => this.stepCard(s, stepPath(path, i), i, steps.length)));
    list.dataset.empty = path.includes('.') ? 'Drop or add steps here' : 'No steps yet: click a method on the left, or drag it here';
  }

  private stepCard(step: Step, path: string, index: number, count: number): HTMLElement {
    const head = h('div', { class: 'wf-step-head d-flex align-items-center gap-1' });
    head.append(h('span', { class: 'wf-handle', title: 'Drag to move', 'aria-hidden': 'true' }, '⠿'));
    const body = h('div', { class: 'wf-step-body' });
    const card = h('div', { class: `wf-step wf-kind-${step.kind}`, 'data-path': path }, head, body);
    if (step.kind === 'call') {
      const m = this.lookup(step.instrument, step.method);
      head.append(h('code', { class: 'wf-step-title' }, `${step.instrument}.${step.method}`));
      if (m && m.safety === 'hazardous') head.append(h('span', { class: `badge ${SAFETY_BADGE[m.safety]}` }, 'hazardous'));
      this.callFields(body, step, m);
    } else {
      head.append(h('strong', { class: 'wf-step-title' }, KIND_TITLE[step.kind] ?? String((step as { kind: unknown }).kind)));
      this.blockFields(body, step, path);
      const warning = blockWarning(step);
      if (warning) body.append(h('div', { class: 'small text-warning-emphasis wf-block-warning' }, warning));
    }
    head.append(
      h('span', { class: 'ms-auto' }),
      h('button', { type: 'button', class: 'btn btn-sm btn-link p-0 px-1', 'data-action': 'up', title: 'Move up', 'aria-label': 'Move up', disabled: index === 0 }, '↑'),
      h('button', { type: 'button', class: 'btn btn-sm btn-link p-0 px-1', 'data-action': 'down', title: 'Move down', 'aria-label': 'Move down', disabled: index === count - 1 }, '↓'),
      h('button', { type: 'button', class: 'btn-close btn-sm ms-1', 'data-action': 'delete', title: 'Delete this step', 'aria-label': 'Delete step' }),
    );
    body.append(h('input', { class: 'form-control form-control-sm wf-label mt-1', 'data-prop': 'label', 'data-field': 'label', value: step.label ?? '', placeholder: 'Note (optional)', 'aria-label': 'Note' }));
    body.append(h('div', { class: 'wf-step-errors' }));
    return card;
  }

  /** One labelled text field with its hint and error places. */
  private field(label: Node[], input: HTMLInputElement | HTMLSelectElement, field: string, extra?: Node): HTMLElement {
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

  private callFields(body: HTMLElement, step: Extract<Step, { kind: 'call' }>, m: MethodInfo | undefined) {
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
      const el = this.field(label, input, `args.${f.name}`, extra);
      if (schema && typeof schema.description === 'string') el.querySelector('label')!.title = schema.description;
      grid.append(el);
    }
    if (!fields.length) grid.append(h('div', { class: 'small text-body-secondary' }, 'No arguments.'));
    body.append(grid);
    const save = h('input', { class: 'form-control form-control-sm', 'data-prop': 'save_as', value: step.save_as ?? '', placeholder: 'e.g. mass', autocomplete: 'off', spellcheck: 'false' });
    body.append(this.field([document.createTextNode('Save result as '), h('span', { class: 'text-body-secondary' }, '(a variable: $name, or an output)')], save, 'save_as'));
  }

  private blockFields(body: HTMLElement, step: Step, path: string) {
    const num = (prop: string, value: number, min: number, step_ = 'any') =>
      h('input', { class: 'form-control form-control-sm wf-num', type: 'number', min, step: step_, 'data-prop': prop, value: String(value ?? '') });
    switch (step.kind) {
      case 'wait':
        body.append(this.field([document.createTextNode('Seconds')], num('seconds', step.seconds, 0), 'seconds'));
        break;
      case 'pause':
        body.append(
          this.field(
            [document.createTextNode('Message for the operator')],
            h('input', { class: 'form-control form-control-sm', 'data-prop': 'message', value: step.message ?? '', placeholder: 'e.g. Change the vial, then resume' }),
            'message',
          ),
        );
        break;
      case 'repeat':
        body.append(this.field([document.createTextNode('Times')], num('times', step.times, 0, '1'), 'times'));
        body.append(this.nested(`${path}.steps`, step.steps, 'Steps to repeat'));
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
        const op = h('select', { class: 'form-select form-select-sm wf-op', 'data-prop': 'cond-op', 'aria-label': 'Comparison' }, ...OPS.map((o) => h('option', { value: o, selected: step.condition?.op === o }, o)));
        op.dataset.field = 'condition.op';
        body.append(
          h('div', { class: 'wf-cond d-flex gap-1 align-items-center' }, side('left'), op, side('right')),
          h('div', { class: 'wf-field-errors', 'data-errors-for': 'condition.left' }),
          h('div', { class: 'wf-field-errors', 'data-errors-for': 'condition.op' }),
          h('div', { class: 'wf-field-errors', 'data-errors-for': 'condition.right' }),
          h('div', { class: 'wf-field-errors', 'data-errors-for': 'condition' }),
          this.nested(`${path}.then`, step.then, 'then'),
          this.nested(`${path}.else`, step.else ?? [], 'else'),
        );
        break;
      }
    }
  }

  private nested(path: string, steps: Step[], title: string): HTMLElement {
    const list = h('div', { class: 'wf-steps wf-nested', 'data-list': path });
    this.fillList(list, path, steps);
    return h('div', { class: 'wf-branch' }, h('div', { class: 'small text-body-secondary' }, title), list);
  }

  /** The hint under an argument field: what the text means, or why it does not fit. */
  private hintArg(input: HTMLInputElement) {
    const hint = input.parentElement?.querySelector<HTMLElement>('.wf-hint');
    if (!hint) return;
    const card = input.closest<HTMLElement>('.wf-step');
    const step = card ? stepAt(this.doc, card.dataset.path!) : null;
    if (!step || step.kind !== 'call') return;
    const schema = this.argSchema(step, input.dataset.arg!);
    const { arg, problem } = parseArgText(input.value, schema);
    hint.className = 'wf-hint small';
    hint.textContent = '';
    if (problem) {
      hint.classList.add('text-warning-emphasis');
      hint.textContent = problem;
    } else if (arg && 'param' in arg) {
      const p = this.doc.parameters.find((x) => x.name === arg.param);
      hint.classList.add('text-info-emphasis');
      hint.textContent = p ? `parameter ${p.name} (${p.type})` : `new parameter ${arg.param}`;
    } else if (arg && 'var' in arg) {
      const known = savedVars(this.doc).includes(arg.var);
      hint.classList.add(known ? 'text-info-emphasis' : 'text-warning-emphasis');
      hint.textContent = known ? `the value saved as ${arg.var}` : `no step saves "${arg.var}" yet (give a step "Save result as ${arg.var}")`;
    }
  }

  private hintAll() {
    for (const input of this.root.querySelectorAll<HTMLInputElement>('input[data-prop="arg"]')) this.hintArg(input);
  }

  private argSchema(step: Extract<Step, { kind: 'call' }>, arg: string) {
    const f = argFields(this.lookup(step.instrument, step.method)?.params).find((x) => x.name === arg);
    return f && Object.keys(f.schema).length ? f.schema : null;
  }

  private renderParams() {
    const box = this.$('#wf-params')!;
    const usage = paramUsage(this.doc);
    if (!this.doc.parameters.length) {
      box.replaceChildren(h('p', { class: 'small text-body-secondary mb-0' }, 'None yet. Type #name in an argument to make one, or press Add.'));
      return;
    }
    box.replaceChildren(
      ...this.doc.parameters.map((p, i) => {
        const used = usage.get(p.name) ?? 0;
        const type = h('select', { class: 'form-select form-select-sm wf-ptype', 'data-pprop': 'type', 'aria-label': 'Type' }, ...PARAM_TYPES.map((t) => h('option', { value: t, selected: p.type === t }, t)));
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

  private renderOutputs() {
    const box = this.$('#wf-outputs')!;
    const offered = outputChoices(this.doc, this.lookup);
    this.offered = offered;
    const names = [...offered, ...this.doc.outputs.filter((o) => !offered.includes(o))];
    if (!names.length) {
      box.replaceChildren(h('p', { class: 'small text-body-secondary mb-0' }, 'The values main steps save ("Save result as") can be reported as the outputs of each iteration.'));
      return;
    }
    box.replaceChildren(
      ...names.map((n) => {
        const id = newId();
        const i = this.doc.outputs.indexOf(n);
        return h(
          'div',
          { class: 'form-check' },
          h('input', { class: 'form-check-input', type: 'checkbox', id, 'data-output': n, checked: i >= 0 }),
          h('label', { class: 'form-check-label small', for: id }, h('code', {}, n), offered.includes(n) ? '' : h('span', { class: 'text-warning-emphasis' }, ' not saved in main')),
          i >= 0 ? h('div', { class: 'wf-field-errors', 'data-errors-for': `outputs[${i}]` }) : null,
        );
      }),
    );
  }

  /** Suggestions for argument fields: #parameters and $variables. */
  private renderRefs() {
    let dl = document.getElementById('wf-refs');
    if (!dl) {
      dl = h('datalist', { id: 'wf-refs' });
      this.root.append(dl);
    }
    dl.replaceChildren(...this.doc.parameters.map((p) => h('option', { value: `#${p.name}` })), ...savedVars(this.doc).map((v) => h('option', { value: `$${v}` })));
  }

  private showTarget() {
    for (const el of this.root.querySelectorAll('.wf-target')) el.classList.remove('wf-target');
    this.$(`.wf-steps[data-list="${this.target}"]`)?.classList.add('wf-target');
    this.$('#wf-target-name')!.textContent = listLabel(this.doc, this.target);
  }

  /** Put the server's problems next to what they name; the rest in the box at the top. */
  private showErrors() {
    for (const el of this.root.querySelectorAll('.wf-field-errors, .wf-step-errors')) el.replaceChildren();
    for (const el of this.root.querySelectorAll('.is-invalid')) el.classList.remove('is-invalid');
    for (const el of this.root.querySelectorAll('.wf-has-error')) el.classList.remove('wf-has-error');
    const general = this.$('#wf-general-errors')!;
    general.replaceChildren();
    if (!this.errors.length && !this.errorMessage) return;
    const msg = (d: Detail) => h('div', { class: 'wf-error small' }, d.message);
    for (const d of this.errors) {
      const place = placeError(d.field);
      if (place.where === 'step') {
        const card = this.$(`.wf-step[data-path="${place.step}"]`);
        if (!card) continue;
        card.classList.add('wf-has-error');
        // the card's own fields only, not those of steps nested in it
        const own = (sel: string) => [...card.querySelectorAll<HTMLElement>(sel)].find((el) => el.closest('.wf-step') === card);
        const slot = place.field ? own(`.wf-field-errors[data-errors-for="${CSS.escape(place.field)}"]`) : undefined;
        own(`[data-field="${CSS.escape(place.field)}"]`)?.classList.add('is-invalid');
        (slot ?? own('.wf-step-errors'))?.append(msg(slot ? d : { message: place.field ? `${place.field} ${d.message}` : d.message }));
      } else if (place.where === 'parameters') {
        const slot = this.$(`.wf-param[data-index="${place.index}"] .wf-field-errors`);
        if (place.field) this.$(`.wf-param[data-index="${place.index}"] [data-pprop="${place.field}"]`)?.classList.add('is-invalid');
        slot?.append(msg({ message: place.field ? `${place.field} ${d.message}` : d.message }));
      } else if (place.where === 'outputs') {
        this.$(`.wf-field-errors[data-errors-for="outputs[${place.index}]"]`)?.append(msg(d));
      } else if (place.where === 'name' || place.where === 'description') {
        this.$(`[data-field="${place.where}"]`)?.classList.add('is-invalid');
        this.$(`.wf-field-errors[data-errors-for="name"]`)?.append(msg(place.where === 'name' ? d : { message: `description ${d.message}` }));
      }
    }
    const items = this.errors.map((d) =>
      h('li', {}, d.field ? h('button', { type: 'button', class: 'btn btn-link btn-sm p-0 align-baseline', 'data-action': 'goto-error', 'data-field': d.field }, d.field) : null, ` ${d.message}`),
    );
    general.append(
      h(
        'div',
        { class: 'alert alert-danger py-2', role: 'alert', 'data-testid': 'save-errors' },
        h('strong', {}, this.errors.length ? `Not saved: ${this.errors.length === 1 ? 'one problem' : `${this.errors.length} problems`}, marked below.` : this.errorMessage),
        items.length ? h('ul', { class: 'mb-0 small' }, ...items) : null,
      ),
    );
  }

  /* -------------------------------------------------------------- events */

  private stepOf(el: HTMLElement): { path: string; step: Step } | null {
    const card = el.closest<HTMLElement>('.wf-step');
    if (!card) return null;
    return { path: card.dataset.path!, step: stepAt(this.doc, card.dataset.path!) };
  }

  /** Typing a field is not a structural change and error marks on the field go once it is edited. */
  private clearMark(el: HTMLElement) {
    if (!el.classList.contains('is-invalid')) return;
    el.classList.remove('is-invalid');
    el.closest('.wf-field, .wf-param, .wf-name-box')?.querySelector('.wf-field-errors')?.replaceChildren();
  }

  private onInput(e: Event) {
    const el = e.target as HTMLInputElement;
    this.clearMark(el);
    if (el.id === 'wf-name') {
      if (!this.name) this.doc.name = el.value;
      const bad = el.value.trim() && !NAME.test(el.value.trim());
      this.$('.wf-field-errors[data-errors-for="name"]')!.replaceChildren(...(bad ? [h('div', { class: 'wf-hint small text-warning-emphasis' }, `A name ${NAME_RULE}`)] : []));
    } else if (el.id === 'wf-description') {
      this.doc.description = el.value;
      this.fitDescription();
    } else if (el.dataset.prop) {
      this.editStep(el);
    } else if (el.dataset.pprop) {
      this.editParam(el, false);
    }
    this.refresh();
  }

  private onChange(e: Event) {
    const el = e.target as HTMLInputElement;
    if (el.dataset.output !== undefined) {
      setOutput(this.doc, el.dataset.output, el.checked);
      this.renderOutputs();
    } else if (el.dataset.pprop) {
      this.editParam(el, true);
    } else if (el.dataset.prop === 'arg' || el.dataset.prop?.startsWith('cond-')) {
      // a finished `#name`: declare the parameter if it is new
      declareMissingParams(this.doc, this.lookup);
      this.renderParams(); // also the usage counts
      this.renderRefs();
      this.hintAll();
    } else if (el.dataset.prop === 'save_as') {
      tickNewOutputs(this.doc, this.lookup, this.offered);
      this.renderOutputs();
      this.renderRefs();
      this.hintAll();
    }
    this.refresh();
  }

  private editStep(el: HTMLInputElement) {
    const at = this.stepOf(el);
    if (!at) return;
    const { step } = at;
    const v = el.value;
    const prop = el.dataset.prop!;
    const numeric = () => (v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : (v as unknown as number));
    if (prop === 'label') step.label = v;
    else if (step.kind === 'call' && prop === 'arg') {
      setArg(step, el.dataset.arg!, parseArgText(v, this.argSchema(step, el.dataset.arg!)).arg);
      this.hintArg(el);
    } else if (step.kind === 'call' && prop === 'save_as') {
      const name = v.trim();
      if (name) step.save_as = name;
      else delete step.save_as;
    } else if (step.kind === 'wait' && prop === 'seconds') step.seconds = numeric();
    else if (step.kind === 'repeat' && prop === 'times') step.times = numeric();
    else if (step.kind === 'pause' && prop === 'message') step.message = v;
    else if (step.kind === 'if') {
      if (prop === 'cond-op') step.condition.op = v as typeof step.condition.op;
      else if (prop === 'cond-left' || prop === 'cond-right') {
        const arg = parseArgText(v, null).arg ?? { value: '' };
        step.condition[prop === 'cond-left' ? 'left' : 'right'] = arg;
      }
    }
  }

  /** A parameter field; a name is applied (with its references) when the field is left, not per keystroke. */
  private editParam(el: HTMLInputElement, done: boolean) {
    const box = el.closest<HTMLElement>('.wf-param');
    const p = box ? this.doc.parameters[Number(box.dataset.index)] : undefined;
    if (!p) return;
    const prop = el.dataset.pprop;
    if (prop === 'name') {
      if (!done) return;
      renameParam(this.doc, p.name, el.value.trim());
      this.render();
      return;
    }
    if (prop === 'type') p.type = el.value as ParamType;
    if (prop === 'type' || prop === 'default') {
      const text = box!.querySelector<HTMLInputElement>('[data-pprop="default"]')!.value;
      const { value } = parseDefault(text, p.type);
      if (value === undefined) delete p.default;
      else p.default = value;
    }
    if (done && prop === 'type') this.hintAll();
  }

  private onClick(e: Event) {
    const el = e.target as HTMLElement;
    const action = el.closest<HTMLElement>('[data-action]');
    const item = el.closest<HTMLElement>('.wf-palette-item');
    if (item) return this.addFromPalette(item, this.target);
    if (el.closest('#wf-save')) return void this.save();
    if (el.closest('#wf-add-param')) return this.addParam();
    if (!action) return this.pickTarget(el);
    const kind = action.dataset.action;
    if (kind === 'goto-error') return this.gotoError(action.dataset.field!);
    if (kind === 'remove-param') {
      const i = Number(action.closest<HTMLElement>('.wf-param')!.dataset.index);
      const p = this.doc.parameters[i];
      const used = paramUsage(this.doc).get(p.name) ?? 0;
      if (used && !window.confirm(`"${p.name}" is used by ${used} step${used > 1 ? 's' : ''}. Remove it anyway?`)) return;
      this.doc.parameters.splice(i, 1);
      this.structural();
      return;
    }
    const at = this.stepOf(action);
    if (!at) return;
    const [list, index] = splitStepPath(at.path);
    if (kind === 'delete') {
      removeStep(this.doc, at.path);
      this.structural();
    } else if (kind === 'up' || kind === 'down') {
      const to = kind === 'up' ? index - 1 : index + 1;
      if (to < 0 || to >= listAt(this.doc, list).length) return;
      moveStep(this.doc, list, index, list, to);
      this.structural(stepPath(list, to));
    }
  }

  /** Clicking or focusing inside a step list makes it where palette clicks add steps. */
  private pickTarget(el: HTMLElement) {
    const list = el.closest<HTMLElement>('.wf-steps') ?? el.closest<HTMLElement>('.wf-phase')?.querySelector<HTMLElement>('.wf-steps');
    if (!list || list.dataset.list === this.target) return;
    this.target = list.dataset.list!;
    this.showTarget();
  }

  private addFromPalette(item: HTMLElement, list: string, index?: number) {
    const step = item.dataset.block ? newBlock(item.dataset.block as BlockKind) : newCall(item.dataset.instrument!, item.dataset.method!);
    const path = insertStep(this.doc, list, index ?? listAt(this.doc, list).length, step);
    this.structural(path);
  }

  private addParam() {
    const names = new Set(this.doc.parameters.map((p) => p.name));
    let n = this.doc.parameters.length + 1;
    while (names.has(`p${n}`)) n++;
    this.doc.parameters.push({ name: `p${n}`, type: 'number' });
    this.structural();
    this.$<HTMLInputElement>(`.wf-param[data-index="${this.doc.parameters.length - 1}"] [data-pprop="name"]`)?.select();
  }

  private gotoError(field: string) {
    const place = placeError(field);
    let el: HTMLElement | null = null;
    if (place.where === 'step') el = this.$(`.wf-step[data-path="${place.step}"]`);
    else if (place.where === 'parameters') el = this.$(`.wf-param[data-index="${place.index}"]`);
    else if (place.where === 'outputs') el = this.$('#wf-outputs');
    else if (place.where === 'name') el = this.$('#wf-name');
    el?.scrollIntoView({ block: 'center' });
    (el?.querySelector<HTMLElement>('.is-invalid') ?? el?.querySelector<HTMLElement>('input') ?? el)?.focus();
  }

  private initPalette() {
    // on a phone the palette comes first: fold the instruments so the steps are not far below
    if (window.matchMedia('(max-width: 767.98px)').matches) {
      for (const d of this.root.querySelectorAll<HTMLDetailsElement>('details.wf-palette-group')) d.open = false;
    }
    const filter = this.$<HTMLInputElement>('#wf-filter');
    filter?.addEventListener('input', () => {
      const q = filter.value.trim().toLowerCase();
      for (const item of this.root.querySelectorAll<HTMLElement>('.wf-palette-item')) {
        item.hidden = !!q && !(item.textContent ?? '').toLowerCase().includes(q) && !(item.title ?? '').toLowerCase().includes(q);
      }
      for (const g of this.root.querySelectorAll<HTMLElement>('.wf-palette-group')) {
        g.hidden = !!q && ![...g.querySelectorAll<HTMLElement>('.wf-palette-item')].some((i) => !i.hidden);
        if (q && !g.hidden && g instanceof HTMLDetailsElement) g.open = true;
      }
    });
    const Sortable = sortableLib();
    if (!Sortable) return;
    for (const el of this.root.querySelectorAll<HTMLElement>('.wf-palette-list')) {
      Sortable.create(el, {
        group: { name: 'wf-steps', pull: 'clone', put: false },
        sort: false,
        draggable: '.wf-palette-item',
        forceFallback: true,
        fallbackOnBody: true,
        delay: 200,
        delayOnTouchOnly: true,
        onEnd: (evt) => {
          const to = evt.to as HTMLElement;
          if (to === evt.from || !to.dataset.list) return;
          // the dragged element landed in the step list (a copy stays in the palette): make it a step
          const item = evt.item;
          item.remove();
          setTimeout(() => this.addFromPalette(item, to.dataset.list!, evt.newIndex), 0);
        },
      });
    }
  }

  private fitDescription() {
    const el = this.$<HTMLTextAreaElement>('#wf-description')!;
    el.rows = Math.min(8, Math.max(1, el.value.split('\n').length));
  }

  /* ---------------------------------------------------------------- save */

  private async save() {
    if (this.saving) return;
    if (declareMissingParams(this.doc, this.lookup).length) this.render();
    const body = toDocument(this.doc);
    const isNew = this.name === null;
    const target = isNew ? this.data.urls.list : `${this.data.urls.base}${encodeURIComponent(this.name!)}`;
    const status = this.$('#wf-status')!;
    const button = this.$<HTMLButtonElement>('#wf-save')!;
    this.saving = true;
    button.disabled = true;
    status.textContent = 'Saving…';
    try {
      const res = await fetch(target, {
        method: isNew ? 'POST' : 'PUT',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify(body),
        credentials: 'same-origin',
      });
      const json = (await res.json().catch(() => null)) as { name?: string; version?: number; workflow?: unknown; error?: { message: string; details?: Detail[] } } | null;
      if (res.ok && json?.name) {
        this.errors = [];
        this.errorMessage = '';
        this.name = json.name;
        this.version = json.version ?? null;
        this.doc = normalise(json.workflow);
        this.saved = this.snapshot();
        this.afterSave(isNew);
        status.textContent = `Saved version ${this.version}`;
        this.render();
        return;
      }
      this.errors = json?.error?.details ?? [];
      this.errorMessage =
        res.status === 401
          ? 'Not saved: you are logged out. Log in again in another tab, then save here.'
          : `Not saved: ${json?.error?.message ?? `the server answered ${res.status}`}`;
      status.textContent = 'Not saved';
      this.showErrors();
      this.$('#wf-general-errors')!.scrollIntoView({ block: 'nearest' });
    } catch {
      this.errorMessage = 'Not saved: the server did not answer. Your changes are still here; try again.';
      status.textContent = 'Not saved';
      this.showErrors();
    } finally {
      this.saving = false;
      button.disabled = false;
      this.refresh();
    }
  }

  /** A new workflow has a name and an address now: the page becomes its builder. */
  private afterSave(isNew: boolean) {
    this.$('#wf-version')!.textContent = `v${this.version}`;
    if (!isNew) return;
    const name = this.$<HTMLInputElement>('#wf-name')!;
    name.value = this.name!;
    name.readOnly = true;
    name.title = 'A saved workflow keeps its name';
    history.replaceState(null, '', `${this.data.urls.base}${encodeURIComponent(this.name!)}/builder`);
    if (!this.$('#wf-run')) {
      this.$('#wf-save')!.before(
        h('a', { id: 'wf-run', class: 'btn btn-outline-primary', href: `${this.data.urls.run}${encodeURIComponent(this.name!)}` }, 'Run'),
        h('a', { id: 'wf-campaign', class: 'btn btn-outline-primary', href: `${this.data.urls.campaign}${encodeURIComponent(this.name!)}` }, 'Optimize'),
      );
    }
    document.title = `Builder · ${this.name} · labdeck`;
  }
}

/** The Delete button of a workflow's page. */
function initDelete() {
  document.addEventListener('click', async (e) => {
    const btn = (e.target as HTMLElement).closest<HTMLButtonElement>('[data-wf-delete]');
    if (!btn) return;
    if (!window.confirm(`Delete the workflow "${btn.dataset.wfName}" and all its versions? Its past runs keep their own copy.`)) return;
    btn.disabled = true;
    const res = await fetch(btn.dataset.wfDelete!, { method: 'DELETE', headers: { Accept: 'application/json' }, credentials: 'same-origin' }).catch(() => null);
    if (res?.ok) location.assign(btn.dataset.wfList!);
    else {
      btn.disabled = false;
      window.alert('The workflow could not be deleted.');
    }
  });
}

export function initBuilder() {
  initDelete();
  const root = document.getElementById('wf-builder');
  const island = document.getElementById('wf-data');
  if (!root || !island) return;
  new Builder(root, JSON.parse(island.textContent ?? '{}') as Data).start();
}

document.addEventListener('DOMContentLoaded', initBuilder);
