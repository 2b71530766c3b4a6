/**
 * Test of the template driver with Node's own test runner: `lab plugins test examples/plugin-template`.
 * A driver's parts are plain functions: create an instance, call `run` with the args and a context.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { myInstrument } from './my-instrument.js';

/** What labdeck hands to every method run. */
const ctx = { signal: new AbortController().signal, log: () => {} };

test('move_to moves, position reads it back, home returns to 0', async () => {
  const c = await myInstrument.create(myInstrument.options.parse({}));
  assert.equal(await myInstrument.methods.move_to.run(c, { position_mm: 42 }, ctx), 42);
  assert.equal(await myInstrument.methods.position.run(c, {}, ctx), 42);
  await myInstrument.methods.home.run(c, {}, ctx);
  assert.equal(await myInstrument.methods.position.run(c, {}, ctx), 0);
  await myInstrument.dispose?.(c);
  assert.equal(c.open, false);
});

test('move_to refuses positions outside 0-300 mm', () => {
  assert.equal(myInstrument.methods.move_to.params.safeParse({ position_mm: -1 }).success, false);
  assert.equal(myInstrument.methods.move_to.params.safeParse({ position_mm: 300 }).success, true);
});
