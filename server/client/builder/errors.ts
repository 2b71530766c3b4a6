/** The server's problems with a workflow, on the builder page: next to what they name, and listed at the top. */
import { placeError } from '../builder-model/index.js';
import { h } from './dom.js';

/** One problem in a 400 answer's details. */
export interface Detail {
  field?: string;
  message: string;
}

/** Put the server's problems next to what they name; the rest in the box at the top. */
export function showErrors(root: HTMLElement, errors: Detail[], errorMessage: string) {
  const $ = (sel: string) => root.querySelector<HTMLElement>(sel);
  for (const el of root.querySelectorAll('.wf-field-errors, .wf-step-errors')) el.replaceChildren();
  for (const el of root.querySelectorAll('.is-invalid')) el.classList.remove('is-invalid');
  for (const el of root.querySelectorAll('.wf-has-error')) el.classList.remove('wf-has-error');
  const general = $('#wf-general-errors')!;
  general.replaceChildren();
  if (!errors.length && !errorMessage) return;
  const msg = (d: Detail) => h('div', { class: 'wf-error small' }, d.message);
  for (const d of errors) {
    const place = placeError(d.field);
    if (place.where === 'step') {
      const card = $(`.wf-step[data-path="${place.step}"]`);
      if (!card) continue;
      card.classList.add('wf-has-error');
      // the card's own fields only, not those of steps nested in it
      const own = (sel: string) => [...card.querySelectorAll<HTMLElement>(sel)].find((el) => el.closest('.wf-step') === card);
      const slot = place.field ? own(`.wf-field-errors[data-errors-for="${CSS.escape(place.field)}"]`) : undefined;
      own(`[data-field="${CSS.escape(place.field)}"]`)?.classList.add('is-invalid');
      (slot ?? own('.wf-step-errors'))?.append(msg(slot ? d : { message: place.field ? `${place.field} ${d.message}` : d.message }));
    } else if (place.where === 'parameters') {
      const slot = $(`.wf-param[data-index="${place.index}"] .wf-field-errors`);
      if (place.field) $(`.wf-param[data-index="${place.index}"] [data-pprop="${place.field}"]`)?.classList.add('is-invalid');
      slot?.append(msg({ message: place.field ? `${place.field} ${d.message}` : d.message }));
    } else if (place.where === 'outputs') {
      $(`.wf-field-errors[data-errors-for="outputs[${place.index}]"]`)?.append(msg(d));
    } else if (place.where === 'name' || place.where === 'description') {
      $(`[data-field="${place.where}"]`)?.classList.add('is-invalid');
      $(`.wf-field-errors[data-errors-for="name"]`)?.append(msg(place.where === 'name' ? d : { message: `description ${d.message}` }));
    }
  }
  const items = errors.map((d) =>
    h('li', {}, d.field ? h('button', { type: 'button', class: 'btn btn-link btn-sm p-0 align-baseline', 'data-action': 'goto-error', 'data-field': d.field }, d.field) : null, ` ${d.message}`),
  );
  general.append(
    h(
      'div',
      { class: 'alert alert-danger py-2', role: 'alert', 'data-testid': 'save-errors' },
      h('strong', {}, errors.length ? `Not saved: ${errors.length === 1 ? 'one problem' : `${errors.length} problems`}, marked below.` : errorMessage),
      items.length ? h('ul', { class: 'mb-0 small' }, ...items) : null,
    ),
  );
}

/** Bring what a problem names into view and focus it. */
export function gotoError(root: HTMLElement, field: string) {
  const $ = (sel: string) => root.querySelector<HTMLElement>(sel);
  const place = placeError(field);
  let el: HTMLElement | null = null;
  if (place.where === 'step') el = $(`.wf-step[data-path="${place.step}"]`);
  else if (place.where === 'parameters') el = $(`.wf-param[data-index="${place.index}"]`);
  else if (place.where === 'outputs') el = $('#wf-outputs');
  else if (place.where === 'name') el = $('#wf-name');
  el?.scrollIntoView({ block: 'center' });
  (el?.querySelector<HTMLElement>('.is-invalid') ?? el?.querySelector<HTMLElement>('input') ?? el)?.focus();
}
