/**
 * Campaigns in the browser. On the campaign page: show only the selected optimizer's options (the others'
 * fieldsets are disabled, so their fields are not sent), enable the bound or choice inputs that fit each
 * parameter's type, and switch workflow on select. On the execution page: the campaign panel, drawn from
 * `latest_plot` (uPlot, the vendor IIFE the panel loads: a global) and fetched again on each iteration of
 * the campaign's run (SSE). Does nothing on other pages.
 */
import type uPlotType from 'uplot';
import type { LatestPlot } from '../../core/campaign/index.js';
import { fmt, niceTicks } from '../views/plot-svg.js';

/* ------------------------------------------------------------------ the campaign page */

export function initCampaignForm() {
  document.querySelectorAll<HTMLSelectElement>('select[data-autosubmit]').forEach((s) => s.addEventListener('change', () => s.form?.requestSubmit()));
  const form = document.getElementById('campaign-form') as HTMLFormElement | null;
  if (!form) return;
  const opt = document.getElementById('campaign-optimizer') as HTMLSelectElement | null;
  const showOptimizer = () =>
    form.querySelectorAll<HTMLFieldSetElement>('fieldset[data-optimizer]').forEach((f) => {
      const on = f.dataset.optimizer === opt?.value;
      f.hidden = !on;
      f.disabled = !on;
    });
  opt?.addEventListener('change', showOptimizer);
  showOptimizer(); // the browser may have restored another selection (back button)
  form.querySelectorAll<HTMLSelectElement>('select[data-param-type]').forEach((sel) => {
    const row = sel.closest('tr')!;
    const apply = () => row.querySelectorAll<HTMLInputElement>('[data-bound]').forEach((i) => (i.disabled = (i.dataset.bound === 'choices') !== (sel.value === 'choice')));
    sel.addEventListener('change', apply);
    apply();
  });
  form.querySelectorAll<HTMLInputElement>('input[type=checkbox][name$=".use"]').forEach((cb) => {
    cb.addEventListener('change', () => cb.closest('tr')?.classList.toggle('campaign-off', !cb.checked));
  });
}

/* ------------------------------------------------------------------ the live panel */

/** The gp plugin's model surface (snapshot().surface): a curve over one parameter, or a grid over two. */
interface Surface {
  parameters: string[];
  objective: string;
  x: number[];
  y?: number[];
  mean: number[] | number[][];
  sd: number[] | number[][];
}

const C = { point: '#0d6efd', best: '#d63384', warm: '#6c757d', band: 'rgba(13,110,253,0.15)', mean: '#0d6efd' };
const STATUS_BADGE: Record<string, string> = { running: 'primary', done: 'success', ok: 'success', failed: 'danger', aborted: 'danger', stopped: 'warning', interrupted: 'warning', pending: 'secondary' };
const HEIGHT = 240;
/** Task states after which a campaign's plot no longer changes. */
const FINAL = new Set(['done', 'failed', 'stopped', 'aborted', 'interrupted']);
/** The part of the runner's status (SSE `hello` and `status`) the panel reads. */
type RunnerStatusLite = { current_task: null | { id: number; kind: string; run_id: number | null } };
/** Viridis, from poor to good. */
const RAMP: [number, number, number][] = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];

const $ = (id: string) => document.getElementById(id);
const uPlotGlobal = () => (window as unknown as { uPlot?: typeof uPlotType }).uPlot;
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const paramsText = (p: Record<string, unknown>) =>
  Object.entries(p)
    .map(([k, v]) => `${k} = ${typeof v === 'number' ? fmt(v) : String(v)}`)
    .join(', ');

function rampRgb(t: number): number[] {
  const x = (Number.isFinite(t) ? Math.min(1, Math.max(0, t)) : 0) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(x));
  const f = x - i;
  return RAMP[i].map((a, k) => Math.round(a + (RAMP[i + 1][k] - a) * f));
}
const ramp = (t: number) => `rgb(${rampRgb(t).join(',')})`;

function surfaceOf(model: unknown): Surface | null {
  const s = (model as { surface?: unknown } | null)?.surface as Surface | null | undefined;
  if (!s || !Array.isArray(s.parameters) || !Array.isArray(s.x) || !Array.isArray(s.mean)) return null;
  if (s.parameters.length === 1 && s.mean.length === s.x.length) return s;
  if (s.parameters.length === 2 && Array.isArray(s.y) && s.mean.length === s.y.length) return s;
  return null;
}

/** Why no model is drawn, in words. */
function modelNote(plot: LatestPlot): string {
  const m = plot.model as Record<string, unknown> | null;
  if (!m) return plot.campaign.status === 'pending' ? 'The campaign waits in the queue.' : '';
  if (!('surface' in m)) return `${plot.campaign.optimizer} builds no model: the plot shows the measurements.`;
  if (m.phase === 'initial') return `The model takes over after the initial design (${String(m.initial_points ?? '')} points); its surface is drawn then.`;
  return 'The model surface is drawn for one or two numeric parameters.';
}

class CampaignPanel {
  private chart: uPlotType | null = null;
  private chartKey = '';
  private model: uPlotType | null = null;
  private modelKey = '';
  private heat: HTMLCanvasElement | null = null;
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
      if (!this.box.hidden) $('campaign-note')!.textContent = `Could not load the campaign: ${(e as Error).message}.`;
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
    const obs = plot.points
      .map((pt) => ({ x: num(pt.params[p]), y: num(pt.values[s.objective]) }))
      .filter((o): o is { x: number; y: number } => o.x !== null && o.y !== null);
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
    const xs = s.x;
    const ys = s.y!;
    const mean = s.mean as number[][];
    const sd = s.sd as number[][];
    const obj = plot.objectives.find((o) => o.name === s.objective) ?? plot.objectives[0];
    $('campaign-model-title')!.textContent = `Model of ${s.objective} over ${px} × ${py} (brighter is better)`;
    if (!this.heat) {
      this.heat = document.createElement('canvas');
      this.heat.className = 'campaign-heatmap';
      this.heat.setAttribute('role', 'img');
      $('campaign-model-chart')!.append(this.heat);
      this.heat.addEventListener('mousemove', (e) => this.readout(e));
      this.heat.addEventListener('mouseleave', () => (this.heat!.title = ''));
    }
    const cv = this.heat;
    const W = Math.min(this.width(), 640);
    const H = Math.round(Math.min(360, W * 0.62));
    const dpr = window.devicePixelRatio || 1;
    cv.width = Math.round(W * dpr);
    cv.height = Math.round(H * dpr);
    cv.style.width = `${W}px`;
    cv.style.height = `${H}px`;
    cv.setAttribute('aria-label', `Model of ${s.objective} over ${px} and ${py}`);
    const g = cv.getContext('2d');
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, W, H);
    const M = { l: 58, r: 70, t: 8, b: 42 };
    const edges = (v: number[]) => {
      if (v.length === 1) return [v[0] - 0.5, v[0] + 0.5];
      const e = [v[0] - (v[1] - v[0]) / 2];
      for (let i = 1; i < v.length; i++) e.push((v[i - 1] + v[i]) / 2);
      e.push(v[v.length - 1] + (v[v.length - 1] - v[v.length - 2]) / 2);
      return e;
    };
    const ex = edges(xs);
    const ey = edges(ys);
    const X = (v: number) => M.l + ((v - ex[0]) / (ex[ex.length - 1] - ex[0])) * (W - M.l - M.r);
    const Y = (v: number) => H - M.b - ((v - ey[0]) / (ey[ey.length - 1] - ey[0])) * (H - M.t - M.b);
    const flat = mean.flat().filter((v) => Number.isFinite(v));
    const lo = Math.min(...flat);
    const hi = Math.max(...flat);
    const t = (v: number) => {
      const f = hi > lo ? (v - lo) / (hi - lo) : 0.5;
      return obj?.minimize ? 1 - f : f;
    };
    // one pixel per grid point, scaled up with smoothing: a continuous surface, no seams between cells
    const img = document.createElement('canvas');
    img.width = xs.length;
    img.height = ys.length;
    const ig = img.getContext('2d');
    if (ig) {
      const pixels = ig.createImageData(xs.length, ys.length);
      ys.forEach((_, iy) =>
        xs.forEach((__, ix) => {
          const [r, gr, b] = rampRgb(t(mean[iy][ix]));
          const o = 4 * ((ys.length - 1 - iy) * xs.length + ix); // image rows run top-down, y bottom-up
          pixels.data.set([r, gr, b, 255], o);
        }),
      );
      ig.putImageData(pixels, 0, 0);
      g.imageSmoothingEnabled = true;
      g.drawImage(img, X(ex[0]), Y(ey[ey.length - 1]), X(ex[ex.length - 1]) - X(ex[0]), Y(ey[0]) - Y(ey[ey.length - 1]));
    }
    // axes
    const style = getComputedStyle(this.box);
    const ink = style.color || '#212529';
    g.fillStyle = ink;
    g.strokeStyle = ink;
    g.font = '11px system-ui, sans-serif';
    g.strokeRect(M.l, M.t, W - M.l - M.r, H - M.t - M.b);
    g.textAlign = 'center';
    for (const v of niceTicks(ex[0], ex[ex.length - 1], 6).ticks) g.fillText(fmt(v), X(v), H - M.b + 14);
    g.fillText(px, M.l + (W - M.l - M.r) / 2, H - 8);
    g.textAlign = 'right';
    for (const v of niceTicks(ey[0], ey[ey.length - 1], 5).ticks) g.fillText(fmt(v), M.l - 5, Y(v) + 4);
    g.save();
    g.translate(13, M.t + (H - M.t - M.b) / 2);
    g.rotate(-Math.PI / 2);
    g.textAlign = 'center';
    g.fillText(py, 0, 0);
    g.restore();
    // colour bar: the objective's model mean, low to high
    const bx = W - M.r + 14;
    const bh = H - M.t - M.b;
    for (let i = 0; i < bh; i++) {
      const v = lo + ((hi - lo) * (bh - i)) / bh;
      g.fillStyle = ramp(t(v));
      g.fillRect(bx, M.t + i, 12, 1.5);
    }
    g.fillStyle = ink;
    g.textAlign = 'left';
    g.fillText(fmt(hi), bx + 16, M.t + 9);
    g.fillText(fmt(lo), bx + 16, M.t + bh);
    // the measurements, and the best one ringed
    const best = plot.best_so_far[plot.best_so_far.length - 1];
    for (const p of plot.points) {
      const x = num(p.params[px]);
      const y = num(p.params[py]);
      if (x === null || y === null) continue;
      const isBest = best && num(p.values[s.objective]) === best.value && p.iteration !== null;
      g.beginPath();
      g.arc(X(x), Y(y), isBest ? 6 : 3.5, 0, 2 * Math.PI);
      g.fillStyle = p.iteration === null ? 'rgba(255,255,255,0.5)' : '#ffffff';
      g.fill();
      g.lineWidth = isBest ? 2.5 : 1.2;
      g.strokeStyle = isBest ? C.best : '#000000';
      g.stroke();
    }
    g.lineWidth = 1;
    this.heatGeometry = { xs, ys, mean, sd, px, py, objective: s.objective, X, Y, ex, ey };
  }

  private heatGeometry: {
    xs: number[];
    ys: number[];
    mean: number[][];
    sd: number[][];
    px: string;
    py: string;
    objective: string;
    X: (v: number) => number;
    Y: (v: number) => number;
    ex: number[];
    ey: number[];
  } | null = null;

  /** The model's value under the mouse, as the canvas's tooltip. */
  private readout(e: MouseEvent) {
    const h = this.heatGeometry;
    if (!h || !this.heat) return;
    const r = this.heat.getBoundingClientRect();
    const mx = e.clientX - r.left;
    const my = e.clientY - r.top;
    const ix = h.ex.findIndex((_, i) => i < h.xs.length && mx >= h.X(h.ex[i]) && mx < h.X(h.ex[i + 1]));
    const iy = h.ey.findIndex((_, i) => i < h.ys.length && my <= h.Y(h.ey[i]) && my > h.Y(h.ey[i + 1]));
    this.heat.title = ix < 0 || iy < 0 ? '' : `${h.px} = ${fmt(h.xs[ix])}, ${h.py} = ${fmt(h.ys[iy])}: ${h.objective} ≈ ${fmt(h.mean[iy][ix])} ± ${fmt(h.sd[iy][ix])}`;
  }
}

export function initCampaignPanel() {
  const box = document.getElementById('campaign');
  if (!box?.dataset.plot) return;
  new CampaignPanel(box).start();
}

// starts itself: server/client/app.ts only imports this module (DOMContentLoaded: after the deferred uPlot)
if (typeof document !== 'undefined') {
  document.addEventListener('DOMContentLoaded', () => {
    initCampaignForm();
    initCampaignPanel();
  });
}
