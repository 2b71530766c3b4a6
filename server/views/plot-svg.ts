/**
 * The latest campaign as a self-contained SVG image (`GET /executions/latest_plot?format=svg`): the first
 * objective of every measurement (dots), the best so far (a step line), warm-start rows (hollow, at x = 0),
 * axes with ticks and labels, and the campaign's name as the title. No script, no external reference, and
 * every piece of text escaped: names come from users.
 */
import type { LatestPlot } from '../../core/campaign/index.js';

const W = 720;
const H = 440;
const M = { left: 70, right: 24, top: 56, bottom: 66 };
const PW = W - M.left - M.right;
const PH = H - M.top - M.bottom;
const COLOR = { point: '#0d6efd', best: '#d63384', warm: '#6c757d', grid: '#dee2e6', axis: '#495057', text: '#212529' };

/** Text for XML: markup characters escaped, characters XML 1.0 forbids (controls, lone surrogates) dropped. */
export function xmlEscape(s: string): string {
  return s
    .replace(/[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const r1 = (v: number) => Math.round(v * 10) / 10;
/** A value as people read it: 4 significant digits, no exponent for everyday magnitudes. */
export const fmt = (v: number) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4))));

/** Round ticks (1, 2, 5 × 10^k) covering [lo, hi], about `count` of them. */
export function niceTicks(lo: number, hi: number, count = 6): { ticks: number[]; step: number } {
  const raw = (hi - lo) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const ticks: number[] = [];
  // snap to the step's own decimals so 0.1 + 0.2 does not show as 0.30000000000000004
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toFixed(decimals)));
  return { ticks, step };
}

const tickLabel = (v: number, step: number) => (step >= 1 ? String(Math.round(v)) : v.toFixed(Math.max(0, -Math.floor(Math.log10(step)))));

function text(x: number, y: number, s: string, attrs = ''): string {
  return `<text x="${r1(x)}" y="${r1(y)}"${attrs ? ` ${attrs}` : ''}>${xmlEscape(s)}</text>`;
}

const paramsText = (params: Record<string, unknown>) =>
  Object.entries(params)
    .map(([k, v]) => `${k} = ${typeof v === 'number' ? fmt(v) : String(v)}`)
    .join(', ');

export function plotSvg(plot: LatestPlot): string {
  const c = plot.campaign;
  const obj = plot.objectives[0];
  const value = (p: LatestPlot['points'][number]) => {
    const v = obj ? p.values[obj.name] : null;
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  };
  const warm = plot.points.filter((p) => p.iteration === null && value(p) !== null);
  const own = plot.points.filter((p) => p.iteration !== null && value(p) !== null);
  const best = plot.best_so_far.filter((b) => Number.isFinite(b.value));
  const measured = plot.points.filter((p) => p.iteration !== null).length;

  // x: 0 (warm start) … the budget (iterations are shown from 1, as on the record page), half a step of room
  const xMax = Math.max(1, c.budget, ...own.map((p) => (p.iteration as number) + 1), ...best.map((b) => b.iteration + 1)) + 0.5;
  const xMin = warm.length ? -0.5 : 0.5;
  const ys = [...warm, ...own].map((p) => value(p) as number).concat(best.map((b) => b.value));
  let yLo = ys.length ? Math.min(...ys) : 0;
  let yHi = ys.length ? Math.max(...ys) : 1;
  if (yHi - yLo < 1e-12) {
    const pad = Math.abs(yLo) > 1e-12 ? Math.abs(yLo) * 0.1 : 1;
    yLo -= pad;
    yHi += pad;
  } else {
    const pad = (yHi - yLo) * 0.06;
    yLo -= pad;
    yHi += pad;
  }
  const yt = niceTicks(yLo, yHi, 6);
  yLo = Math.min(yLo, yt.ticks[0] ?? yLo);
  yHi = Math.max(yHi, yt.ticks[yt.ticks.length - 1] ?? yHi);
  const xt = niceTicks(Math.ceil(xMin), Math.floor(xMax), Math.min(10, Math.floor(xMax)));
  const X = (x: number) => M.left + ((x - xMin) / (xMax - xMin)) * PW;
  const Y = (y: number) => M.top + PH - ((y - yLo) / (yHi - yLo)) * PH;

  const out: string[] = [];
  const objLabel = obj ? `${obj.name} (${obj.minimize ? 'minimize' : 'maximize'})` : 'objective';
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="plot-title plot-desc" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" font-size="12" fill="${COLOR.text}">`,
    `<title id="plot-title">${xmlEscape(`Campaign ${c.name}`)}</title>`,
    `<desc id="plot-desc">${xmlEscape(`${objLabel} per iteration and best so far: ${measured} of ${c.budget} measured`)}</desc>`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    text(M.left, 22, clip(`Campaign: ${c.name}`, 64), 'font-size="16" font-weight="600"'),
    text(M.left, 40, clip(`${c.workflow} · ${c.optimizer} · ${c.status} · ${measured} of ${c.budget} measured${warm.length ? ` · ${warm.length} warm-start` : ''}`, 95), `fill="${COLOR.axis}"`),
  );

  // grid, ticks and their labels
  out.push(`<g class="grid" stroke="${COLOR.grid}" stroke-width="1">`);
  for (const t of yt.ticks) out.push(`<line x1="${M.left}" x2="${M.left + PW}" y1="${r1(Y(t))}" y2="${r1(Y(t))}"/>`);
  for (const t of xt.ticks) out.push(`<line x1="${r1(X(t))}" x2="${r1(X(t))}" y1="${M.top}" y2="${M.top + PH}"/>`);
  out.push('</g>', `<g class="ticks" fill="${COLOR.axis}" font-size="11">`);
  for (const t of yt.ticks) out.push(text(M.left - 6, Y(t) + 4, tickLabel(t, yt.step), 'text-anchor="end"'));
  for (const t of xt.ticks) out.push(text(X(t), M.top + PH + 16, t === 0 ? 'warm' : tickLabel(t, xt.step), 'text-anchor="middle"'));
  out.push('</g>');
  out.push(
    `<rect x="${M.left}" y="${M.top}" width="${PW}" height="${PH}" fill="none" stroke="${COLOR.axis}" stroke-width="1"/>`,
    text(M.left + PW / 2, M.top + PH + 34, 'iteration', 'text-anchor="middle"'),
    text(16, M.top + PH / 2, clip(objLabel, 60), `text-anchor="middle" transform="rotate(-90 16 ${r1(M.top + PH / 2)})"`),
  );

  if (!warm.length && !own.length) {
    out.push(text(M.left + PW / 2, M.top + PH / 2, obj ? `No measurement of ${obj.name} yet` : 'No measurement yet', `text-anchor="middle" font-size="14" fill="${COLOR.axis}" class="empty"`));
  }

  // best so far: a step line, level until the next improvement
  if (best.length) {
    const pts: string[] = [];
    best.forEach((b, i) => {
      const x = X(b.iteration + 1);
      if (i > 0) pts.push(`${r1(x)},${r1(Y(best[i - 1].value))}`);
      pts.push(`${r1(x)},${r1(Y(b.value))}`);
    });
    out.push(`<polyline class="best" points="${pts.join(' ')}" fill="none" stroke="${COLOR.best}" stroke-width="2"/>`);
  }
  for (const p of warm) {
    const v = value(p) as number;
    out.push(
      `<circle class="warm" cx="${r1(X(0))}" cy="${r1(Y(v))}" r="4" fill="#ffffff" stroke="${COLOR.warm}" stroke-width="1.5"><title>${xmlEscape(`warm start: ${obj!.name} = ${fmt(v)} (${paramsText(p.params)})`)}</title></circle>`,
    );
  }
  for (const p of own) {
    const v = value(p) as number;
    const it = (p.iteration as number) + 1;
    out.push(
      `<circle class="point" cx="${r1(X(it))}" cy="${r1(Y(v))}" r="4" fill="${COLOR.point}"><title>${xmlEscape(`iteration ${it}: ${obj!.name} = ${fmt(v)} (${paramsText(p.params)})`)}</title></circle>`,
    );
  }

  // legend, a row under the axis label
  const ly = H - 12;
  let lx = M.left + PW / 2 - (warm.length ? 170 : 95);
  out.push(`<g class="legend" font-size="11">`, `<circle cx="${r1(lx)}" cy="${ly - 4}" r="4" fill="${COLOR.point}"/>`, text(lx + 8, ly, 'measured'));
  lx += 80;
  out.push(`<line x1="${r1(lx - 6)}" x2="${r1(lx + 6)}" y1="${ly - 4}" y2="${ly - 4}" stroke="${COLOR.best}" stroke-width="2"/>`, text(lx + 10, ly, 'best so far'));
  lx += 95;
  if (warm.length) out.push(`<circle cx="${r1(lx)}" cy="${ly - 4}" r="4" fill="#ffffff" stroke="${COLOR.warm}" stroke-width="1.5"/>`, text(lx + 8, ly, 'warm start (before iteration 1)'));
  out.push(
    '</g>',
    '</svg>',
  );
  return out.join('\n');
}
