/** Input steps (issue 31): the value check, the workflow's validation, and `lab run`'s typing keys. */
import { checkInputValue, describeInput, accepts } from '../../core/workflow/input.js';
import { validateWorkflow } from '../../core/workflow/validate.js';
import { typeKey } from '../../cli/run-view.js';
import { labError } from '../helpers/errors.js';

const PH = { type: 'number', minimum: 0, maximum: 14, unit: 'pH' } as const;

describe('checkInputValue', () => {
  it("reads a form's text into the type, and refuses what does not fit naming the field", () => {
    expect(checkInputValue(PH, '7.2')).toBe(7.2);
    expect(checkInputValue(PH, 0)).toBe(0);
    for (const bad of ['abc', 15, -1, '', null, true]) {
      const e = labError(() => checkInputValue(PH, bad, { name: 'pH' }));
      expect(e.code).toBe('invalid_input');
      expect(e.details).toEqual([{ field: 'value', message: expect.stringContaining('a number from 0 to 14 (pH)') }]);
    }
    expect(checkInputValue({ type: 'integer' }, '3')).toBe(3);
    expect(labError(() => checkInputValue({ type: 'integer' }, '3.5')).code).toBe('invalid_input');
    expect(checkInputValue({ type: 'string', enum: ['clear', 'cloudy'] }, ' clear ')).toBe('clear');
    expect(labError(() => checkInputValue({ type: 'string', enum: ['clear', 'cloudy'] }, 'red')).details![0].message).toContain('"clear", "cloudy"');
    expect(checkInputValue({ type: 'boolean' }, 'yes')).toBe(true);
    expect(checkInputValue({ type: 'boolean' }, false)).toBe(false);
    expect(labError(() => checkInputValue({ type: 'boolean' }, 'maybe')).code).toBe('invalid_input');
  });

  it('checks a file against its accept list and size', () => {
    const f = { filename: 'a1b2.csv', original_name: 'plate.csv', bytes: 10, type: 'text/csv' };
    expect(checkInputValue({ type: 'file', accept: '.csv' }, f)).toEqual(f);
    expect(labError(() => checkInputValue({ type: 'file', accept: 'image/*' }, f)).code).toBe('invalid_input');
    expect(labError(() => checkInputValue({ type: 'file', max_bytes: 5 }, f)).code).toBe('invalid_input');
    expect(accepts('.csv,image/*', 'x.png', 'image/png')).toBe(true);
    expect(describeInput({ type: 'file', accept: '.csv' })).toBe('a file (.csv)');
  });
});

describe('validating an input step', () => {
  it('saves its variable for later steps and outputs; names a bad schema by its path', () => {
    const wf = validateWorkflow(
      {
        name: 'w',
        outputs: ['pH'],
        main: [
          { kind: 'input', prompt: 'pH?', save_as: 'pH', schema: PH },
          { kind: 'if', condition: { left: { var: 'pH' }, op: '>', right: { value: 7 } }, then: [] },
        ],
      },
      null,
    );
    expect(wf.main[0]).toMatchObject({ kind: 'input', save_as: 'pH' });
    const e = labError(() => validateWorkflow({ name: 'w', main: [{ kind: 'input', prompt: 'pH?', save_as: 'pH', schema: PH, colour: 1 }] }, null));
    expect(e.details).toEqual([expect.objectContaining({ field: 'main[0].colour', message: expect.stringContaining('an "input" step') })]);
  });
});

describe('lab run types the value of a waiting input', () => {
  const waiting = { status: { input: { save_as: 'pH' } } as never, outcome: null };
  const key = { ctrl: false, return: false, backspace: false, delete: false };
  it('keys type, Backspace deletes, Enter gives; no input waiting: keys are the controls', () => {
    expect(typeKey('7', key, { ...waiting, typed: '' })).toEqual({ text: '7' });
    expect(typeKey('.', key, { ...waiting, typed: '7' })).toEqual({ text: '7.' });
    expect(typeKey('', { ...key, backspace: true }, { ...waiting, typed: '7.' })).toEqual({ text: '7' });
    expect(typeKey('', { ...key, return: true }, { ...waiting, typed: '7.2' })).toBe('give');
    expect(typeKey('c', { ...key, ctrl: true }, { ...waiting, typed: '' })).toBeNull();
    expect(typeKey('p', key, { status: { input: null } as never, outcome: null })).toBeNull();
  });
});
