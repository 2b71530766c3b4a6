/**
 * Deck files of ivoryOS's next generation (`ivoryos-deck/1`): a deck written as data, read unchanged by
 * `lab serve --deck lab.deck.json`. Its shape is checked here (a field labdeck does not know is refused by
 * name); the Python host builds its instruments (python/labdeck_host/deck_file.py). An instrument that fails
 * at `import`, `init` (its constructor) or `setup` (its `calls`) never stops the others: it becomes an offline
 * device carrying its stage and error (calls answer 503), retried on request once the lab has fixed it.
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { z } from 'zod';
import type { InstrumentDriver } from '../contracts/index.js';
import { LabError } from '../errors.js';
import { invalid, issueDetails } from './validate.js';

export const DECK_FORMAT = 'ivoryos-deck/1';

/** Why an instrument of a deck file is not there: the stage that failed and what it said. */
export interface InstrumentFailure {
  stage: 'config' | 'import' | 'init' | 'setup' | 'deck';
  error: string;
  detail?: string;
  /** The entry's module and class, as the deck file names them. */
  import?: string | null;
  class?: string | null;
  /** The deck file it comes from (retry reads it again). */
  file: string;
}

/** A failed instrument as a foreign loader hands it to the deck: a driver with no methods, and why. */
export interface FailedInstrument {
  name: string;
  driver: InstrumentDriver;
  failure: InstrumentFailure;
}

const value: z.ZodType<unknown> = z.unknown();
const call = z.object({ method: z.string().min(1), args: z.record(z.string(), value).optional() }).strict();
const instrument = z
  .object({
    name: z.string().min(1),
    import: z.string().min(1),
    class: z.string().min(1),
    args: z.record(z.string(), value).optional(),
    calls: z.array(call).optional(),
    enabled: z.boolean().optional(),
    description: z.string().optional(),
  })
  .strict();
const deckFile = z
  .object({
    format: z.literal(DECK_FORMAT).optional(),
    name: z.string().optional(),
    description: z.string().optional(),
    packages: z.array(z.string()).optional(),
    paths: z.array(z.string()).optional(),
    plugins: z.array(value).optional(),
    instruments: z.array(instrument).optional(),
  })
  .strict();

export type DeckFile = z.infer<typeof deckFile>;

/** Is this file a deck file (rather than a deck module)? */
export function isDeckFile(file: string): boolean {
  return extname(file).toLowerCase() === '.json';
}

/** Read and check a deck file: 400 naming the field (`instruments.2.clas is not a known parameter`). */
export function readDeckFile(file: string): DeckFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    const message = (e as Error).message;
    throw new LabError('invalid_input', `Cannot load ${file}: ${message}`, [{ field: 'filepath', message }], { file });
  }
  const r = deckFile.safeParse(raw);
  if (!r.success) throw invalid(`Cannot load ${file} (an ${DECK_FORMAT} deck file)`, issueDetails(r.error.issues));
  return r.data;
}

/** The offline reason a failed instrument shows: the stage and the error, and how to bring it back. */
export function failureReason(f: InstrumentFailure): string {
  return `${f.stage} failed: ${f.error} (fix it, then retry the instrument)`;
}
