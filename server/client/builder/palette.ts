/** The builder's palette of methods and blocks. */
import { sortableLib } from './dom.js';

/** The palette: folded on phones, filtered as one types, and its items dragged into a step list (`add`). */
export function initPalette(root: HTMLElement, add: (item: HTMLElement, list: string, index?: number) => void) {
  // on a phone the palette comes first: fold the instruments so the steps are not far below
  if (window.matchMedia('(max-width: 767.98px)').matches) {
    for (const d of root.querySelectorAll<HTMLDetailsElement>('details.wf-palette-group')) d.open = false;
  }
  const filter = root.querySelector<HTMLInputElement>('#wf-filter');
  filter?.addEventListener('input', () => {
    const q = filter.value.trim().toLowerCase();
    for (const item of root.querySelectorAll<HTMLElement>('.wf-palette-item')) {
      item.hidden = !!q && !(item.textContent ?? '').toLowerCase().includes(q) && !(item.title ?? '').toLowerCase().includes(q);
    }
    for (const g of root.querySelectorAll<HTMLElement>('.wf-palette-group')) {
      g.hidden = !!q && ![...g.querySelectorAll<HTMLElement>('.wf-palette-item')].some((i) => !i.hidden);
      if (q && !g.hidden && g instanceof HTMLDetailsElement) g.open = true;
    }
  });
  const Sortable = sortableLib();
  if (!Sortable) return;
  for (const el of root.querySelectorAll<HTMLElement>('.wf-palette-list')) {
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
        setTimeout(() => add(item, to.dataset.list!, evt.newIndex), 0);
      },
    });
  }
}
