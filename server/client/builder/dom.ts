/** The little DOM the builder needs: making elements, unique ids, and SortableJS (a vendor script: a global). */
import type SortableType from 'sortablejs';

type SortableCtor = typeof SortableType;
export const sortableLib = () => (globalThis as { Sortable?: SortableCtor }).Sortable;

type Child = Node | string | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined>;

/** An element: `class` sets the class, `true` a bare attribute; false/null/undefined leave it out. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
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
export const newId = () => `wf-f${++uid}`;
