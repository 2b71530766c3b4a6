/**
 * Template of a labdeck instrument driver. Copy this file into a plugin folder (`./lab-plugins` by
 * default, or `lab serve --plugins DIR`), rename the driver, and replace the simulated state by calls to
 * your instrument (serial port, HTTP, vendor SDK, ...). labdeck reloads the file when you save it.
 *
 * Everything the web app shows comes from this definition: the options become the "connect" form, each
 * method's `params` a form on the instrument's page, and every call is validated against them.
 */
// Inside this repository the contract is imported by path. In your own plugin folder write
//   import { defineInstrument, z } from 'labdeck/contracts';
// labdeck provides that module to the plugins it loads, from any folder (`lab init plugin NAME` scaffolds
// a driver like this one, with a test: `lab plugins test`).
import { defineInstrument, z } from '../../core/contracts/index.js';

/** What `create` returns: the connection/state your methods work on. */
interface Connection {
  port: string;
  position_mm: number;
  open: boolean;
}

export const myInstrument = defineInstrument({
  name: 'my-instrument',
  version: '0.1.0',
  description: 'A linear stage (simulated: describe your instrument here).',
  options: z.object({
    port: z.string().default('/dev/ttyUSB0').describe('Serial port'),
  }),
  // Open the connection here. Throwing makes "connect" fail with your message.
  create: (o): Connection => ({ port: o.port, position_mm: 0, open: true }),
  // Called before the instance is replaced (file saved) or labdeck stops: close ports here.
  dispose: (c) => {
    c.open = false;
  },
  methods: {
    move_to: {
      description: 'Move to an absolute position.',
      params: z.object({ position_mm: z.number().min(0).max(300).describe('Target position, mm (0-300)') }),
      returns: z.number(),
      safety: 'hazardous', // asks for confirmation in the UI
      async run(c, { position_mm }, ctx) {
        // Long operations should honour ctx.signal (labdeck stopping) and may log progress.
        await new Promise((r) => setTimeout(r, 20));
        if (ctx.signal.aborted) throw new Error('aborted');
        c.position_mm = position_mm;
        ctx.log(`moved to ${position_mm} mm`);
        return c.position_mm;
      },
    },
    position: {
      description: 'Read the current position, mm.',
      params: z.object({}),
      returns: z.number(),
      safety: 'readonly',
      run: (c) => c.position_mm,
    },
    home: {
      description: 'Move to the home position (0 mm).',
      params: z.object({}),
      safety: 'idempotent',
      run(c) {
        c.position_mm = 0;
        return 0;
      },
    },
  },
});
