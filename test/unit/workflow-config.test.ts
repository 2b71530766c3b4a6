import { LabError, type ErrorDetail } from '../../core/errors.js';
import { checkConfigRows, coerceValue, isTypeRow, repeatRow } from '../../core/workflow/config.js';
import { Workflow } from '../../core/workflow/model.js';

const wf = Workflow.parse({
  name: 'dose',
  parameters: [
    { name: 'volume', type: 'number' },
    { name: 'count', type: 'integer', default: 2 },
    { name: 'stir', type: 'boolean', default: false },
    { name: 'solvent', type: 'string', default: 'water' },
  ],
});

function failure(fn: () => unknown): LabError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(LabError);
    expect((e as LabError).code).toBe('invalid_input');
    return e as LabError;
  }
  throw new Error('expected a LabError');
}
const details = (fn: () => unknown): ErrorDetail[] => failure(fn).details ?? [];

describe('checkConfigRows', () => {
  test('coerces CSV strings to each parameter type, in parameter order', () => {
    const rows = checkConfigRows(wf, [
      { solvent: 'ethanol', stir: 'TRUE', count: '3', volume: '1.5' },
      { volume: ' 2e-1 ', count: '-4', stir: 'no', solvent: '42' },
      { volume: '.5', stir: 'on' },
    ]);
    expect(rows).toEqual([
      { volume: 1.5, count: 3, stir: true, solvent: 'ethanol' },
      { volume: 0.2, count: -4, stir: false, solvent: '42' },
      { volume: 0.5, count: 2, stir: true, solvent: 'water' },
    ]);
    expect(Object.keys(rows[0])).toEqual(['volume', 'count', 'stir', 'solvent']);
  });

  test('accepts JSON values as they are (and numbers for a string parameter)', () => {
    expect(checkConfigRows(wf, [{ volume: 3, count: 5, stir: true, solvent: 7 }])).toEqual([{ volume: 3, count: 5, stir: true, solvent: '7' }]);
  });

  test('a missing value, an empty cell or null takes the default', () => {
    expect(checkConfigRows(wf, [{ volume: 1, count: '', stir: null }])).toEqual([{ volume: 1, count: 2, stir: false, solvent: 'water' }]);
  });

  test('a missing value without a default is an error naming row and column', () => {
    expect(details(() => checkConfigRows(wf, [{ volume: 1 }, { volume: 2 }, { volume: '  ' }]))).toEqual([
      { field: 'row 3, column volume', message: 'has no value, and the parameter "volume" has no default: give one' },
    ]);
  });

  test('values that do not fit the type', () => {
    expect(
      details(() =>
        checkConfigRows(wf, [
          { volume: 'abc', count: '2.5', stir: 'maybe' },
          { volume: '1,5', solvent: { a: 1 } },
        ]),
      ),
    ).toEqual([
      { field: 'row 1, column volume', message: '"abc" is not a number' },
      { field: 'row 1, column count', message: '"2.5" is not a whole number' },
      { field: 'row 1, column stir', message: '"maybe" is not true or false' },
      { field: 'row 2, column volume', message: '"1,5" is not a number: write decimals with a dot (1.5)' },
      { field: 'row 2, column solvent', message: '{"a":1} is not text' },
    ]);
    expect(details(() => checkConfigRows(wf, [{ volume: '0x10' }]))[0].message).toContain('is not a number');
    expect(details(() => checkConfigRows(wf, [{ volume: 'Infinity' }]))[0].message).toContain('is not a number');
  });

  test('an unknown column is reported once, at the first row that has it', () => {
    const err = failure(() => checkConfigRows(wf, [{ volume: 1 }, { volume: 1, volumes: 2 }, { volume: 1, volumes: 3 }]));
    expect(err.details).toEqual([{ field: 'row 2, column volumes', message: '"volumes" is not a parameter of workflow "dose"; its parameters are volume, count, stir, solvent' }]);
    expect(err.message).toBe('The config for workflow "dose" is not valid: row 2, column volumes: "volumes" is not a parameter of workflow "dose"; its parameters are volume, count, stir, solvent');
  });

  test('a label function names rows the way the caller counts them (CSV lines)', () => {
    expect(details(() => checkConfigRows(wf, [{ volume: 1 }, { volume: 'x' }], { label: (i) => `line ${i + 2}` }))).toEqual([{ field: 'line 3, column volume', message: '"x" is not a number' }]);
  });

  test('zero parameters and n rows is fine; a column is still an error', () => {
    const none = Workflow.parse({ name: 'plain' });
    expect(checkConfigRows(none, [{}, {}, {}])).toEqual([{}, {}, {}]);
    expect(details(() => checkConfigRows(none, [{ x: 1 }]))[0]).toEqual({ field: 'row 1, column x', message: '"x" is not a parameter of workflow "plain"; it has no parameters' });
  });

  test('no rows, or not a list of objects', () => {
    expect(details(() => checkConfigRows(wf, []))).toEqual([{ field: 'config', message: 'has no rows: give at least one parameter set' }]);
    expect(details(() => checkConfigRows(wf, { volume: 1 }))[0].field).toBe('config');
    expect(details(() => checkConfigRows(wf, [{ volume: 1 }, 5]))).toEqual([{ field: 'row 2', message: 'must be an object of parameter values' }]);
  });

  test('very many problems are capped', () => {
    const rows = Array.from({ length: 500 }, () => ({ volume: 'x' }));
    const d = details(() => checkConfigRows(wf, rows));
    expect(d).toHaveLength(101);
    expect(d[100]).toEqual({ message: 'and 400 more problems' });
  });
});

describe('repeatRow', () => {
  const defaults = Workflow.parse({
    name: 'r',
    parameters: [
      { name: 'a', default: 1 },
      { name: 'b', type: 'string', default: 'x' },
    ],
  });

  test('the row of defaults every iteration uses', () => {
    expect(repeatRow(defaults, 3)).toEqual({ a: 1, b: 'x' });
    expect(repeatRow(Workflow.parse({ name: 'none' }), 2)).toEqual({});
  });

  test('names the parameters without defaults', () => {
    expect(details(() => repeatRow(wf, 2))).toEqual([{ field: 'parameters[0].default', message: expect.stringMatching(/^the parameter "volume" has no default, so a repeat cannot supply it/) }]);
  });

  test('n must be a whole number of at least 1', () => {
    for (const n of [0, -1, 1.5, Number.NaN, 1_000_001]) expect(details(() => repeatRow(defaults, n))[0].field).toBe('repeat');
  });
});

describe('config helpers', () => {
  test('coerceValue', () => {
    expect(coerceValue('integer', '007')).toEqual({ ok: true, value: 7 });
    expect(coerceValue('boolean', 1)).toEqual({ ok: true, value: true });
    expect(coerceValue('boolean', 0)).toEqual({ ok: true, value: false });
    expect(coerceValue('string', '')).toEqual({ ok: 'missing' });
  });

  test('isTypeRow recognises a second row of type names', () => {
    expect(isTypeRow({ volume: 'float', solvent: 'str', stir: 'Bool' })).toBe(true);
    expect(isTypeRow({ volume: '1.5', solvent: 'str' })).toBe(false);
    expect(isTypeRow({})).toBe(false);
  });
});
