/**
 * The builder page's state and what each edit does. Plain DOM code: the state is one workflow document,
 * changed only through the builder model; a change of structure (add, move, delete) re-renders the step lists
 * (steps.ts) and the panels (panels.ts), typing in a field updates the document in place (so focus stays).
 * Saving is save.ts; the server's problems are placed by errors.ts.
 */
import type SortableType from 'sortablejs';
import {
  NAME,
  NAME_RULE,
  PHASES,
  declareMissingParams,
  insertStep,
  listLabel,
  listAt,
  moveStep,
  newBlock,
  newCall,
  normalise,
  paramUsage,
  parseDefault,
  removeStep,
  renameParam,
  tickNewOutputs,
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
} from '../builder-model/index.js';
import { h, sortableLib } from './dom.js';
import { gotoError, showErrors, type Detail } from './errors.js';
import { initPalette } from './palette.js';
import { renderOutputs, renderParams, renderRefs } from './panels.js';
import { sendWorkflow, showSaved, type Urls } from './save.js';
import { editStep, fillList, hintAll } from './steps.js';

/** The page's data island (server/views/workflows.tsx: BuilderData). */
export interface Data {
  name: string | null;
  version: number | null;
  workflow: unknown;
  instruments: InstrumentInfo[];
  urls: Urls;
}

export class Builder {
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
    initPalette(this.root, (item, list, index) => this.addFromPalette(item, list, index));
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
      fillList(list, phase, this.doc[phase], this.lookup);
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
    showErrors(this.root, this.errors, this.errorMessage);
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

  /* ---------------------------------------------------- the panels, the hints */

  private renderParams() {
    renderParams(this.$('#wf-params')!, this.doc);
  }

  private renderOutputs() {
    this.offered = renderOutputs(this.$('#wf-outputs')!, this.doc, this.lookup);
  }

  private renderRefs() {
    renderRefs(this.root, this.doc);
  }

  private hintAll() {
    hintAll(this.root, this.doc, this.lookup);
  }

  private showTarget() {
    for (const el of this.root.querySelectorAll('.wf-target')) el.classList.remove('wf-target');
    this.$(`.wf-steps[data-list="${this.target}"]`)?.classList.add('wf-target');
    this.$('#wf-target-name')!.textContent = listLabel(this.doc, this.target);
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
      const at = this.stepOf(el);
      if (at) editStep(at.step, el, this.doc, this.lookup);
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
    } else if (el.dataset.prop === 'input-type') {
      this.render(); // the fields of the new type
    } else if (el.dataset.prop === 'save_as') {
      tickNewOutputs(this.doc, this.lookup, this.offered);
      this.renderOutputs();
      this.renderRefs();
      this.hintAll();
    }
    this.refresh();
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
    if (kind === 'goto-error') return gotoError(this.root, action.dataset.field!);
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
    const status = this.$('#wf-status')!;
    const button = this.$<HTMLButtonElement>('#wf-save')!;
    this.saving = true;
    button.disabled = true;
    status.textContent = 'Saving…';
    try {
      const answer = await sendWorkflow(this.data.urls, this.name, body);
      if ('saved' in answer) {
        this.errors = [];
        this.errorMessage = '';
        this.name = answer.saved.name;
        this.version = answer.saved.version;
        this.doc = normalise(answer.saved.workflow);
        this.saved = this.snapshot();
        showSaved(this.root, this.data.urls, this.name, this.version, isNew);
        status.textContent = `Saved version ${this.version}`;
        this.render();
        return;
      }
      this.errors = answer.details;
      this.errorMessage = answer.message;
      status.textContent = 'Not saved';
      showErrors(this.root, this.errors, this.errorMessage);
      this.$('#wf-general-errors')!.scrollIntoView({ block: 'nearest' });
    } catch {
      this.errorMessage = 'Not saved: the server did not answer. Your changes are still here; try again.';
      status.textContent = 'Not saved';
      showErrors(this.root, this.errors, this.errorMessage);
    } finally {
      this.saving = false;
      button.disabled = false;
      this.refresh();
    }
  }
}
