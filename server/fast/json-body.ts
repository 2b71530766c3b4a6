/**
 * JSON request bodies (issue 16, the call path). body-parser reads a body through raw-body, an iconv
 * decoder, content-type and type-is parsing and its debug hooks: about 8% of a no-op call's CPU. The plain
 * case (what scripts and labdeck's own clients send: `Content-Type: application/json`, a Content-Length
 * within the limit, no Content-Encoding) is read here directly. Anything else goes to body-parser as
 * before, and so does a plain body that does not parse: body-parser reads the same bytes again, so every
 * error (its status, type and message) is exactly its own. Part of the fast path (./switch.ts): off, the app
 * uses express.json alone.
 */
import type { RequestHandler } from 'express';
import { Readable } from 'node:stream';
import { limitBytes } from '../body-cap.js';

/** The body's first character other than JSON's white space. */
function firstChar(text: string): string {
  let i = 0;
  while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  return text[i] ?? '';
}

/** `parser` (express.json with `limit`) with the plain case read directly. */
export function jsonBody(parser: RequestHandler, limit: string): RequestHandler {
  const max = limitBytes(limit);
  return (req, res, next) => {
    const h = req.headers;
    const length = h['content-length'];
    const plain =
      h['content-type'] === 'application/json' &&
      h['content-encoding'] === undefined &&
      h['transfer-encoding'] === undefined &&
      length !== undefined &&
      /^[1-9]\d{0,9}$/.test(length) &&
      Number(length) <= max;
    if (!plain || req.readableEnded) return parser(req, res, next);
    const chunks: Buffer[] = [];
    const onData = (c: Buffer) => chunks.push(c);
    // a client gone before the end of its body: raw-body's error (no one reads the answer)
    const onAborted = () => {
      cleanup();
      next(Object.assign(new Error('request aborted'), { status: 400, statusCode: 400, type: 'request.aborted', code: 'ECONNABORTED' }));
    };
    const onEnd = () => {
      cleanup();
      const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      const text = buf.toString('utf8');
      // (a byte-order mark is body-parser's to strip; strict JSON starts with an object or an array)
      if (text.charCodeAt(0) !== 0xfeff && '{['.includes(firstChar(text) || 'x')) {
        try {
          req.body = JSON.parse(text);
          return next();
        } catch {
          // body-parser says what is wrong with it
        }
      }
      // the same bytes, for body-parser to read as it would have read the request (its check that a body is
      // not read already looks at `complete` and the socket: these say it is not, even if the client is gone)
      const again = Object.assign(Readable.from([buf], { objectMode: false }), { headers: h, complete: false, socket: { readable: true } });
      parser(again as unknown as typeof req, res, (err?: unknown) => (err ? next(err) : ((req.body = (again as { body?: unknown }).body), next())));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', onAborted);
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('aborted', onAborted);
    req.once('error', onAborted);
  };
}
