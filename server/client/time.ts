/**
 * Every moment a page shows (`<time data-local>`, server/views/layout.tsx LocalTime) in the viewer's own
 * time zone, with its name: `2026-11-25 06:17:10 CET`. The server writes UTC; a page without JavaScript keeps
 * that, said to be UTC. Runs on load and on every htmx swap.
 */
/** `YYYY-MM-DD HH:MM:SS ZONE` in a time zone: the browser's own unless one is named. */
export function localText(date: Date, timeZone?: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  }).formatToParts(date);
  const p = (type: Intl.DateTimeFormatPartTypes) => parts.find((x) => x.type === type)?.value ?? '';
  return `${p('year')}-${p('month')}-${p('day')} ${p('hour')}:${p('minute')}:${p('second')} ${p('timeZoneName')}`;
}

/** The time of day of an ISO moment, `HH:MM:SS` in a time zone (the browser's own unless one is named); the ISO text when it is none. */
export function localClock(iso: string, timeZone?: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat('en-US', { timeZone, hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(date);
}

export function localiseTimes(root: ParentNode = document) {
  for (const el of root.querySelectorAll<HTMLTimeElement>('time[data-local]')) {
    const date = new Date(el.dateTime);
    if (Number.isNaN(date.getTime())) continue;
    el.textContent = localText(date);
    el.title = el.dateTime;
  }
}

if (typeof document !== 'undefined') {
  document.addEventListener('DOMContentLoaded', () => localiseTimes());
  document.addEventListener('htmx:afterSwap', (e) => localiseTimes(e.target as ParentNode));
}
