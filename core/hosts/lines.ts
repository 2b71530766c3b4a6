/**
 * Newline-delimited framing of a child's stdout (the Python host, the parse pool), linear in the bytes read:
 * the pieces of an unfinished line are kept as they came and joined once, when its newline arrives; each
 * chunk is scanned once, for its own newlines only. A string that grows by `+=` and is searched again from
 * its start for every chunk is quadratic: a 20 MB reply took ~20 s and stalled the event loop (issue 26 #11).
 *
 * One line is at most `maxBytes`: the rest of a longer one is dropped as it arrives (never held), and
 * `onTooLong` gets its first bytes (where a reply's id is) and its length once its newline arrives; the
 * lines after it are read as usual.
 */

/** The default limit on one reply of the Python host: 16 MB, or LABDECK_PYTHON_MAX_REPLY (bytes). */
export function maxReplyBytes(): number {
  const v = Number(process.env.LABDECK_PYTHON_MAX_REPLY);
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : 16 * 1024 * 1024;
}

/** How many bytes of an over-long line `onTooLong` is given. */
const HEAD = 256;

export interface LineReaderOptions {
  /** The longest line taken, in bytes (without its newline). */
  maxBytes: number;
  /** A line longer than maxBytes: its first bytes (as text) and its whole length in bytes. */
  onTooLong(head: string, bytes: number): void;
}

export class LineReader {
  private pieces: Buffer[] = [];
  private size = 0;
  /** The line being read is over the limit: its head, kept; the rest is counted and dropped. */
  private overHead: string | null = null;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly opts: LineReaderOptions,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.overHead === null && this.size + piece.length > this.opts.maxBytes) this.startOver(piece);
      if (this.overHead !== null) {
        const head = this.overHead;
        const bytes = this.size + piece.length;
        this.reset();
        this.opts.onTooLong(head, bytes);
        continue;
      }
      const line = this.pieces.length ? Buffer.concat([...this.pieces, piece], this.size + piece.length).toString('utf8') : piece.toString('utf8');
      this.reset();
      this.onLine(line);
    }
    if (start >= chunk.length) return;
    const rest = chunk.subarray(start);
    if (this.overHead === null && this.size + rest.length > this.opts.maxBytes) this.startOver(rest);
    if (this.overHead !== null) {
      this.size += rest.length;
      return;
    }
    // a copy: a slice would keep the whole chunk (64 kB) alive for a few bytes
    this.pieces.push(start === 0 ? chunk : Buffer.from(rest));
    this.size += rest.length;
  }

  /** The bytes of an unfinished line (what the child wrote last without a newline). */
  get pending(): number {
    return this.size;
  }

  /** The line under way is over the limit: keep its head, drop what was kept of it. */
  private startOver(next: Buffer): void {
    const kept = Buffer.concat([...this.pieces, next.subarray(0, HEAD)]).subarray(0, HEAD);
    this.overHead = kept.toString('utf8');
    this.pieces = [];
    // size keeps counting the line's bytes; what was kept is already in it
  }

  private reset(): void {
    this.pieces = [];
    this.size = 0;
    this.overHead = null;
  }
}
