/**
 * The record page's plot: one uPlot chart per output of the workflow, its value per iteration, from the
 * data route (`data-url` of #record-plot). uPlot is the vendor IIFE script the page loads (a global); only
 * its types are imported here. Does nothing on other pages.
 */
import type uPlotType from 'uplot';
import { sentence } from '../../core/text.js';

interface PlotData {
  run_id: number;
  workflow: string;
  parameters: string[];
  outputs: string[];
  iterations: { iteration: number; status: string }[];
  series: Record<string, (number | null)[]>;
  /** A campaign's best so far of its first objective. */
  best?: { objective: string; minimize: boolean; values: (number | null)[] };
  /** Units of the columns the deck declares one for (ivoryOS's Unit marker): shown on the axis. */
  units?: Record<string, string>;
}

const COLORS = ['#0d6efd', '#d63384', '#198754', '#fd7e14', '#6f42c1', '#20c997', '#dc3545', '#0dcaf0'];
const HEIGHT = 220;

function note(box: HTMLElement, text: string) {
  const p = box.querySelector<HTMLElement>('.record-plot-note');
  if (p) p.textContent = text;
}

/** Width of one chart: the container's, two per row on wide screens. */
function chartWidth(container: HTMLElement): number {
  const w = container.clientWidth || 600;
  return w >= 1000 ? Math.floor((w - 16) / 2) : w;
}

function draw(box: HTMLElement, data: PlotData) {
  const UPlot = (window as unknown as { uPlot?: typeof uPlotType }).uPlot;
  const container = box.querySelector<HTMLElement>('.record-charts')!;
  if (!UPlot) return note(box, 'The plot library did not load; the data is at the “Plot data” link.');
  if (data.iterations.length === 0) return note(box, 'No iteration has run yet.');
  if (data.outputs.length === 0) return note(box, 'This workflow names no output: add outputs to it to see them plotted per iteration.');
  const plotted = data.outputs.filter((o) => (data.series[o] ?? []).some((v) => v !== null));
  const skipped = data.outputs.filter((o) => !plotted.includes(o));
  note(box, skipped.length ? `Not plotted (no numeric value): ${skipped.join(', ')}.` : '');
  const x = data.iterations.map((it) => it.iteration + 1); // iterations are shown from 1, as on the page
  const charts: uPlotType[] = [];
  plotted.forEach((name, i) => {
    const div = document.createElement('div');
    div.className = 'record-chart';
    div.dataset.output = name;
    container.append(div);
    // a campaign's objective gets its best so far beside it
    const best = data.best?.objective === name ? data.best : null;
    const unit = data.units && Object.hasOwn(data.units, name) ? data.units[name] : undefined;
    const axis = unit ? `${name} (${unit})` : name;
    const opts: uPlotType.Options = {
      title: best ? `${name} (best so far: dashed)` : name,
      width: chartWidth(container),
      height: HEIGHT,
      scales: { x: { time: false } },
      // iterations are whole numbers: no tick between two of them
      axes: [{ label: 'iteration', incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000] }, { label: axis }],
      series: [
        { label: 'iteration' },
        { label: axis, stroke: COLORS[i % COLORS.length], width: 2, points: { show: true, size: 6 }, spanGaps: false },
        ...(best ? [{ label: `best ${name}`, stroke: '#6c757d', width: 2, dash: [6, 4], points: { show: false } }] : []),
      ],
    };
    const series = best ? [x, data.series[name]!, best.values] : [x, data.series[name]!];
    charts.push(new UPlot(opts, series as uPlotType.AlignedData, div));
  });
  let pending = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => charts.forEach((c) => c.setSize({ width: chartWidth(container), height: HEIGHT })));
  });
}

export function initRecordPlot() {
  const box = document.getElementById('record-plot');
  if (!box?.dataset.url) return;
  note(box, 'Loading the data…');
  fetch(box.dataset.url, { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
    .then((r) => (r.ok ? (r.json() as Promise<PlotData>) : Promise.reject(new Error(`the server answered ${r.status}`))))
    .then(
      (data) => draw(box, data),
      (e: Error) => note(box, `Could not load the plot data: ${sentence(e.message)}`),
    );
}

// starts itself: server/client/app.ts only imports this module
if (typeof document !== 'undefined') document.addEventListener('DOMContentLoaded', initRecordPlot);
