/** The campaign panel's model over two parameters: its mean as a heatmap on a canvas, the measurements on top. */
import type { LatestPlot } from '../../../core/campaign/index.js';
import { fmt, niceTicks } from '../../views/plot-svg.js';
import { C, num, type Surface } from './common.js';

/** Viridis, from poor to good. */
const RAMP: [number, number, number][] = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];

function rampRgb(t: number): number[] {
  const x = (Number.isFinite(t) ? Math.min(1, Math.max(0, t)) : 0) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(x));
  const f = x - i;
  return RAMP[i].map((a, k) => Math.round(a + (RAMP[i + 1][k] - a) * f));
}
const ramp = (t: number) => `rgb(${rampRgb(t).join(',')})`;

/** Where the last drawing put the grid: what the mouse readout needs. */
interface Geometry {
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
}

export class Heatmap {
  private readonly cv = document.createElement('canvas');
  private geometry: Geometry | null = null;

  constructor(parent: HTMLElement) {
    this.cv.className = 'campaign-heatmap';
    this.cv.setAttribute('role', 'img');
    parent.append(this.cv);
    this.cv.addEventListener('mousemove', (e) => this.readout(e));
    this.cv.addEventListener('mouseleave', () => (this.cv.title = ''));
  }

  remove() {
    this.cv.remove();
  }

  /** Draw `s` at `width` CSS pixels, axes and labels in `ink`. */
  draw(plot: LatestPlot, s: Surface, width: number, ink: string) {
    const [px, py] = s.parameters;
    const xs = s.x;
    const ys = s.y!;
    const mean = s.mean as number[][];
    const sd = s.sd as number[][];
    const obj = plot.objectives.find((o) => o.name === s.objective) ?? plot.objectives[0];
    const cv = this.cv;
    const W = width;
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
    this.geometry = { xs, ys, mean, sd, px, py, objective: s.objective, X, Y, ex, ey };
  }

  /** The model's value under the mouse, as the canvas's tooltip. */
  private readout(e: MouseEvent) {
    const h = this.geometry;
    if (!h) return;
    const r = this.cv.getBoundingClientRect();
    const mx = e.clientX - r.left;
    const my = e.clientY - r.top;
    const ix = h.ex.findIndex((_, i) => i < h.xs.length && mx >= h.X(h.ex[i]) && mx < h.X(h.ex[i + 1]));
    const iy = h.ey.findIndex((_, i) => i < h.ys.length && my <= h.Y(h.ey[i]) && my > h.Y(h.ey[i + 1]));
    this.cv.title = ix < 0 || iy < 0 ? '' : `${h.px} = ${fmt(h.xs[ix])}, ${h.py} = ${fmt(h.ys[iy])}: ${h.objective} ≈ ${fmt(h.mean[iy][ix])} ± ${fmt(h.sd[iy][ix])}`;
  }
}
