/**
 * The execution page's campaign panel: drawn from `latest_plot` with uPlot (the vendor IIFE the panel loads:
 * a global) and fetched again on each iteration of the campaign's run (SSE): the objective per iteration and
 * the best so far, then the optimizer's model over one parameter (a curve) or two (heatmap.ts).
 */
import type uPlotType from 'uplot';
import type { LatestPlot } from '../../../core/campaign/index.js';
import { fmt } from '../../views/plot-svg.js';
import { C, modelNote, num, surfaceOf, type Surface } from './common.js';
import { Heatmap } from './heatmap.js';
import { sentence } from '../../../core/text.js';

const STATUS_BADGE: Record<string, string> = {
  running: 'primary',
  done: 'success',
  ok: 'success',
  failed: 'danger',
  aborted: 'danger',
  stopped: 'warning',
  interrupted: 'warning',
  pending: 'secondary',
};
const HEIGHT = 240;
/** Task states after which a campaign's plot no longer changes. */
const FINAL = new Set(['done', 'failed', 'stopped', 'aborted', 'interrupted']);
/** The part of the runner's status (SSE `hello` and `status`) the panel reads. */
type RunnerStatusLite = { current_task: null | { id: number; kind: string; run_id: number | null } };

const $ = (id: string) => document.getElementById(id);
const uPlotGlobal = () => (window as unknown as { uPlot?: typeof uPlotType }).uPlot;
const paramsText = (p: Record<string, unknown>) =>
  Object.entries(p)
    .map(([k, v]) => `${k} = ${typeof v === 'number' ? fmt(v) : String(v)}`)
    .join(', ');

class CampaignPanel {
  private chart: uPlotType | null = null;
  private chartKey = '';
  private model: uPlotType | null = null;
  private modelKey = '';
  private heat: Heatmap | null = null;
  private plot: LatestPlot | null = null;
  private busy = false;
  private again = false;
  /** x range of the progress chart (the full budget, so the points grow into it). */
  private xRange: [number, number] = [0, 1];

  constructor(private readonly box: HTMLElement) {}

  /** What the last status event said runs now (kind, task, run): a change may mean another campaign. */
  private lastCurrent = '';

  start() {
    // fetch at once only when the server says a campaign exists: latest_plot answers 404 otherwise, and the
    // browser would log that as an error on every visit of a lab that never ran one
    if (this.box.dataset.active === 'true') void this.refresh();
    const events = new EventSource(this.box.dataset.events!);
    const onStatus = (e: Event) => this.onStatus((JSON.parse((e as MessageEvent).data) as { status: RunnerStatusLite }).status);
    events.addEventListener('hello', onStatus);
    events.addEventListener('status', onStatus);
    events.addEventListener('iteration', (e) => {
      const d = JSON.parse((e as MessageEvent).data) as { run_id: number };
      if (this.plot && this.plot.campaign.run_id === d.run_id) void this.refresh();
    });
    events.addEventListener('run', (e) => {
      const d = JSON.parse((e as MessageEvent).data) as { task_id: number };
      if (this.plot && this.plot.campaign.task_id === d.task_id) void this.refresh();
    });
    let frame = 0;
    window.addEventListener('resize', () => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => {
        const w = this.width();
        this.chart?.setSize({ width: w, height: HEIGHT });
        this.model?.setSize({ width: w, height: HEIGHT });
        if (this.plot && this.heat) this.drawHeat(this.plot, surfaceOf(this.plot.model)!);
      });
    });
  }

  /**
   * A campaign task running (its run just made, or another campaign than the one drawn): fetch the plot. The
   * drawn campaign not finished while something else (or nothing) runs: fetch once more for its final state.
   */
  private onStatus(s: RunnerStatusLite) {
    const t = s.current_task;
    const key = t ? `${t.kind}|${t.id}|${t.run_id}` : 'idle';
    if (key === this.lastCurrent) return;
    this.lastCurrent = key;
    if (t?.kind === 'campaign') {
      if (!this.plot || this.plot.campaign.task_id !== t.id || this.plot.campaign.run_id !== t.run_id) void this.refresh();
    } else if (this.plot && !FINAL.has(this.plot.campaign.status)) void this.refresh();
  }

  private width() {
    return Math.max(280, this.box.clientWidth || 600);
  }

  /** Fetch latest_plot and draw it; one request at a time, and one more if asked meanwhile. */
  async refresh(): Promise<void> {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    try {
      const r = await fetch(this.box.dataset.plot!, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
      if (r.status === 404) return; // no campaign has run: the panel stays hidden
      if (!r.ok) throw new Error(`the server answered ${r.status}`);
      this.plot = (await r.json()) as LatestPlot;
      this.box.hidden = false;
      $('campaign-start-link')?.setAttribute('hidden', '');
      this.draw(this.plot);
    } catch (e) {
      if (!this.box.hidden) $('campaign-note')!.textContent = `Could not load the campaign: ${sentence((e as Error).message)}`;
    } finally {
      this.busy = false;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    }
  }

  private draw(plot: LatestPlot) {
    const c = plot.campaign;
    const obj = plot.objectives[0];
    const value = (p: LatestPlot['points'][number]) => (obj ? num(p.values[obj.name]) : null);
    const own = plot.points.filter((p) => p.iteration !== null);
    const measured = own.filter((p) => value(p) !== null);
    const warm = plot.points.filter((p) => p.iteration === null && value(p) !== null);
    $('campaign-name')!.textContent = c.name;
    const badge = $('campaign-status')!;
    badge.textContent = c.status;
    badge.className = `badge text-bg-${STATUS_BADGE[c.status] ?? 'secondary'}`;
    const best = plot.best_so_far[plot.best_so_far.length - 1];
    const bestPoint = best ? measured.find((p) => value(p) === best.value) : undefined;
    $('campaign-summary')!.textContent = [
      `${c.workflow} · ${c.optimizer} · ${own.length} of ${c.budget} measured${warm.length ? ` (+ ${warm.length} warm-start)` : ''}`,
      best && obj ? `best ${obj.name} ${fmt(best.value)}${bestPoint ? ` at ${paramsText(bestPoint.params)}` : ''}` : '',
    ]
      .filter(Boolean)
      .join(' · ');
    // stop_when met: the campaign ran no further, and says which measurement met it
    const stopped = $('campaign-stopped')!;
    stopped.hidden = !c.stopped_early;
    stopped.textContent = c.stopped_early ? `Stopped early after ${own.length} of ${c.budget} experiments: ${c.stopped_early}.` : '';
    this.box.dataset.stopped = c.stopped_early ? 'true' : 'false';
    this.box.dataset.points = String(measured.length);
    this.box.dataset.status = c.status;
    const UPlot = uPlotGlobal();
    if (!UPlot) {
      $('campaign-note')!.textContent = 'The plot library did not load; the SVG and JSON links still work.';
      return;
    }
    if (obj) this.drawProgress(UPlot, plot, value, warm, own);
    const surface = surfaceOf(plot.model);
    const modelBox = $('campaign-model')!;
    modelBox.hidden = !surface;
    this.box.dataset.model = surface ? `${surface.parameters.length}d` : 'none';
    $('campaign-note')!.textContent = surface ? '' : modelNote(plot);
    if (!surface) {
      this.clearModel();
      return;
    }
    if (surface.parameters.length === 1) this.drawCurve(UPlot, plot, surface);
    else this.drawHeat(plot, surface);
  }

  /** The objective per iteration (dots), warm-start rows at x = 0 (hollow), and the best so far (steps). */
  private drawProgress(UPlot: typeof uPlotType, plot: LatestPlot, value: (p: LatestPlot['points'][number]) => number | null, warm: LatestPlot['points'], own: LatestPlot['points']) {
    const obj = plot.objectives[0];
    const n = warm.length;
    // warm-start rows spread a little around x = 0 so that they do not hide each other
    const xs = [...warm.map((_, k) => (n === 1 ? 0 : -0.3 + (0.6 * k) / (n - 1))), ...own.map((p) => (p.iteration as number) + 1)];
    const bestAt = new Map(plot.best_so_far.map((b) => [b.iteration + 1, b.value]));
    const data: (number | null)[][] = [
      xs,
      ...(n ? [xs.map((_, i) => (i < n ? value(warm[i]) : null))] : []),
      xs.map((_, i) => (i < n ? null : value(own[i - n]))),
      xs.map((x, i) => (i < n ? null : (bestAt.get(x) ?? null))),
    ];
    const lastX = Math.max(plot.campaign.budget, ...xs);
    this.xRange = [n ? -0.6 : 0.5, lastX + 0.5];
    const key = `${obj.name}|${obj.minimize}|${n > 0}`;
    if (this.chart && key === this.chartKey) {
      this.chart.setData(data as uPlotType.AlignedData);
      return;
    }
    this.chart?.destroy();
    this.chartKey = key;
    const stepped = UPlot.paths.stepped?.({ align: 1 });
    const dots = (label: string, fill: string, stroke: string): uPlotType.Series => ({
      label,
      stroke,
      fill: 'transparent',
      width: 1.5,
      paths: () => null,
      points: { show: true, size: 8, fill, stroke, width: 1.5 },
    });
    const opts: uPlotType.Options = {
      width: this.width(),
      height: HEIGHT,
      scales: { x: { time: false, range: () => this.xRange } },
      axes: [
        {
          label: 'iteration',
          incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000],
          values: (_u, splits) => splits.map((v) => (v === 0 && n ? 'warm' : Number.isInteger(v) && v > 0 ? String(v) : '')),
        },
        { label: `${obj.name} (${obj.minimize ? 'minimize' : 'maximize'})`, size: 60 },
      ],
      series: [
        { label: 'iteration', value: (_u, v) => (v === null ? '' : v < 1 ? 'warm start' : String(v)) },
        ...(n ? [dots('warm start', '#ffffff', C.warm)] : []),
        dots(obj.name, C.point, C.point),
        { label: 'best so far', stroke: C.best, width: 2, spanGaps: true, ...(stepped ? { paths: stepped } : {}), points: { show: false } },
      ],
    };
    this.chart = new UPlot(opts, data as uPlotType.AlignedData, $('campaign-chart')!);
  }

  private clearModel() {
    this.model?.destroy();
    this.model = null;
    this.modelKey = '';
    this.heat?.remove();
    this.heat = null;
  }

  /** One parameter: the model's mean ± 2 sd over the parameter, and the measurements on it. */
  private drawCurve(UPlot: typeof uPlotType, plot: LatestPlot, s: Surface) {
    const [p] = s.parameters;
    const mean = s.mean as number[];
    const sd = s.sd as number[];
    const obs = plot.points.map((pt) => ({ x: num(pt.params[p]), y: num(pt.values[s.objective]) })).filter((o): o is { x: number; y: number } => o.x !== null && o.y !== null);
    // one x axis for the grid and the measurements (uPlot series share their x values)
    const rows = new Map<number, { m?: number; sd?: number; y?: number }>();
    s.x.forEach((x, i) => rows.set(x, { m: mean[i], sd: sd[i] }));
    for (const o of obs) rows.set(o.x, { ...(rows.get(o.x) ?? {}), y: o.y });
    const xs = [...rows.keys()].sort((a, b) => a - b);
    const get = (x: number) => rows.get(x)!;
    const data = [
      xs,
      xs.map((x) => get(x).m ?? null),
      xs.map((x) => (get(x).m === undefined ? null : get(x).m! + 2 * (get(x).sd ?? 0))),
      xs.map((x) => (get(x).m === undefined ? null : get(x).m! - 2 * (get(x).sd ?? 0))),
      xs.map((x) => get(x).y ?? null),
    ];
    $('campaign-model-title')!.textContent = `Model of ${s.objective} over ${p}: mean ± 2 sd, and the measurements`;
    this.heat?.remove();
    this.heat = null;
    const key = `1d|${p}|${s.objective}`;
    if (this.model && key === this.modelKey) {
      this.model.setData(data as uPlotType.AlignedData);
      return;
    }
    this.model?.destroy();
    this.modelKey = key;
    const opts: uPlotType.Options = {
      width: this.width(),
      height: HEIGHT,
      scales: { x: { time: false } },
      axes: [{ label: p }, { label: s.objective, size: 60 }],
      series: [
        { label: p },
        { label: 'model mean', stroke: C.mean, width: 2, spanGaps: true, points: { show: false } },
        { label: '+2 sd', stroke: 'rgba(13,110,253,0.35)', width: 1, dash: [4, 4], spanGaps: true, points: { show: false } },
        { label: '−2 sd', stroke: 'rgba(13,110,253,0.35)', width: 1, dash: [4, 4], spanGaps: true, points: { show: false } },
        { label: 'measured', stroke: C.best, fill: 'transparent', paths: () => null, points: { show: true, size: 8, fill: C.best, stroke: C.best } },
      ],
      bands: [{ series: [2, 3], fill: C.band }],
    };
    this.model = new UPlot(opts, data as uPlotType.AlignedData, $('campaign-model-chart')!);
  }

  /** Two parameters: the model's mean as a heatmap (brighter is better), the measurements on top. */
  private drawHeat(plot: LatestPlot, s: Surface) {
    this.model?.destroy();
    this.model = null;
    this.modelKey = '';
    const [px, py] = s.parameters;
    $('campaign-model-title')!.textContent = `Model of ${s.objective} over ${px} × ${py} (brighter is better)`;
    this.heat ??= new Heatmap($('campaign-model-chart')!);
    this.heat.draw(plot, s, Math.min(this.width(), 640), getComputedStyle(this.box).color || '#212529');
  }
}

export function initCampaignPanel() {
  const box = document.getElementById('campaign');
  if (!box?.dataset.plot) return;
  new CampaignPanel(box).start();
}
