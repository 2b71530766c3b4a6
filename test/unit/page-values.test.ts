/**
 * How pages show values (issue 25 §3, "Pages"): a dict or list result as a small table, a list of numbers as
 * an inline SVG sparkline, everything escaped; the recent-calls table in a box of its own that scrolls, its
 * long JSON cells breaking; a traceback keeping its lines; moments in the viewer's time zone.
 */
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import type { StepRow } from '../../core/store/types.js';
import { CallResult, RecentCalls, TaskPage, stepJson } from '../../server/views/instruments.js';
import { ValueView } from '../../server/views/value-view.js';
import { ParametersTable } from '../../server/views/record.js';
import type { ViewCtx } from '../../server/views/layout.js';

const ctx: ViewCtx = { url: (p) => `/app${p}`, mode: 'light', logo: false, path: '/app/instruments/cell' };
const html = (el: Parameters<typeof renderToStaticMarkup>[0]) => renderToStaticMarkup(el);

const step = (over: Partial<StepRow>): StepRow => ({
  id: 7,
  runId: null,
  phase: null,
  iteration: null,
  stepIndex: null,
  instrument: 'cell',
  method: 'read',
  args: {},
  output: null,
  status: 'ok',
  error: null,
  userId: 1,
  startedAt: new Date('2026-11-25T05:17:10Z'),
  endedAt: new Date('2026-11-25T05:17:11Z'),
  log: null,
  ...over,
});

describe('a result as a small table', () => {
  it('shows a dict as a table of its fields, escaped, a rounded number with its full value on hover', () => {
    const out = html(createElement(ValueView, { value: { current_ma: 2.123456789, note: '<script>alert(1)</script>' } }));
    expect(out).toContain('<table class="table table-sm table-borderless value-table mb-0">');
    expect(out).toContain('<th scope="row" class="fw-normal text-body-secondary">current_ma</th>');
    expect(out).toContain('<span title="2.123456789">2.12346</span>');
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(out).not.toContain('<script>');
  });

  it('shows a list of numbers as an inline SVG sparkline with its count and range, and a long list cut with how many more', () => {
    const out = html(createElement(ValueView, { value: [1, 3, 2, 5] }));
    expect(out).toMatch(
      /<svg class="sparkline" width="120" height="24" viewBox="0 0 120 24" role="img" aria-label="4 numbers from 1 to 5"><title>4 numbers from 1 to 5<\/title><polyline fill="none" stroke="currentColor" stroke-width="1.5" points="[\d. ,]+"><\/polyline><\/svg>/,
    );
    expect(out).toContain('4 values, 1 … 5');
    const flat = html(createElement(ValueView, { value: [2, 2] }));
    expect(flat).toContain('points="1.0,12.0 119.0,12.0"'); // a constant series is a flat line in the middle
    const long = html(createElement(ValueView, { value: Array.from({ length: 30 }, (_, i) => `item ${i}`) }));
    expect(long.match(/<tr>/g)).toHaveLength(21);
    expect(long).toContain('and 10 more');
  });

  it('in the call result: a dict as a table (its JSON one click away), a number as before', () => {
    const dict = html(createElement(CallResult, { ctx, outcome: { method: 'read', taskId: 3, output: { current_ma: 2, trace: [1, 2, 3] } } }));
    expect(dict).toContain('value-table');
    expect(dict).toContain('<svg class="sparkline"');
    expect(dict).toContain('<details class="small mt-1"><summary>JSON</summary><pre class="small output">');
    const scalar = html(createElement(CallResult, { ctx, outcome: { method: 'read', taskId: 3, output: 1.5 } }));
    expect(scalar).toContain('<pre class="small output">1.5</pre>');
    expect(scalar).not.toContain('value-table');
  });
});

describe('the recent calls', () => {
  it('scroll in a box of their own, long JSON cells break, a dict result is a compact table', () => {
    const long = { program: 'x'.repeat(500) };
    const out = html(createElement(RecentCalls, { ctx, steps: [step({ args: long, output: { current_ma: 2, power_mw: 5 } }), step({ id: 8, output: 'y'.repeat(300) })] }));
    expect(out.startsWith('<div class="table-responsive"><table class="table table-sm small recent-calls">')).toBe(true);
    expect(out).toContain('<td class="text-break"><code>read</code>');
    expect(out).toContain('value-table mb-0 value-table-compact');
    expect(out).toContain('power_mw');
  });
});

describe('the call record page', () => {
  it("keeps the lines of a traceback and shows the start in the viewer's time zone", () => {
    const traceback = 'ValueError: no cell\nTraceback (most recent call last):\n  File "deck.py", line 3, in read\n    raise ValueError("no cell")';
    const out = html(createElement(TaskPage, { ctx, step: stepJson(step({ status: 'error', error: traceback })) }));
    expect(out).toContain(`<pre class="small text-danger traceback">${traceback.replace(/"/g, '&quot;')}</pre>`);
    expect(out).toContain('<time dateTime="2026-11-25T05:17:10.000Z" data-local="">2026-11-25 05:17:10 UTC</time>');
  });
});

describe("a record's parameter rows", () => {
  it('say once which parameters are the same in every row (a fixed value)', () => {
    const out = html(
      createElement(ParametersTable, {
        rows: [
          { rpm: 100, mode: 'slow' },
          { rpm: 200, mode: 'slow' },
        ],
        repeat: null,
      }),
    );
    expect(out).toContain('<p class="small" id="record-fixed">The same in every row: mode = &quot;slow&quot;</p>');
    expect(html(createElement(ParametersTable, { rows: [{ rpm: 100 }], repeat: null }))).not.toContain('record-fixed');
  });
});
