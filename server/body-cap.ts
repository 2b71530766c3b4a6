/**
 * An over-limit body is refused before it is read (issue 26 item 14). body-parser and multer answer 413 only
 * once they have read the rest of the body off the connection ("read off entire request"), so a client
 * declaring or streaming a gigabyte had the server read a gigabyte first. Here, before any parser:
 *
 * - a `Content-Length` over the limit answers 413 at once, unread, and the connection is closed after it;
 * - a streamed (chunked) body is counted as it arrives: once past the limit, 413 is answered and the
 *   connection closed, and nothing more of it is read.
 *
 * The limits are the parsers' own (forms, JSON and text: the body limit; multipart: the largest upload and
 * room for its parts' headers), which still check what is within them.
 */
import type { Request, RequestHandler, Response } from 'express';
import { LabError } from '../core/errors.js';
import { errorBody } from './http.js';
import { wantsJson } from './respond.js';

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2 };

/** A body limit as the app writes it (`1mb`, `100kb`, `512b`), in bytes. */
export function limitBytes(limit: string): number {
  const m = /^(\d+)(b|kb|mb)$/i.exec(limit.trim());
  if (!m) throw new Error(`A body limit is a number of b, kb or mb (like 1mb), not "${limit}".`);
  return Number(m[1]) * UNITS[m[2]!.toLowerCase()]!;
}

/** Room for a multipart body's boundaries, part headers and small fields, beyond its file. */
export const MULTIPART_SLACK = 64 * 1024;

const tooLarge = (max: number) =>
  new LabError('payload_too_large', `The request body is larger than this route takes (${max} bytes): send a smaller one; nothing of it was read.`, [{ field: 'body', message: `over ${max} bytes` }]);

/** Answer 413 now (the parsers are still waiting for the body that will not come), then close. */
function refuse(req: Request, res: Response, max: number) {
  if (res.headersSent) return req.socket?.destroy();
  const err = tooLarge(max);
  // (wantsJson kept: this answer is written raw, with Connection: close, while the parsers still wait for the body)
  const json = wantsJson(req);
  const body = Buffer.from(json ? JSON.stringify(errorBody(err)) : err.message);
  res.writeHead(413, { Connection: 'close', 'Content-Type': json ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8', 'Content-Length': body.length });
  res.end(body);
}

/** The middleware: `parsed` bytes for forms, JSON and text, `multipart` bytes for uploads. */
export function bodyCap(limits: { parsed: number; multipart: number }): RequestHandler {
  return (req, res, next) => {
    const h = req.headers;
    const length = h['content-length'];
    const chunked = h['transfer-encoding'] !== undefined;
    if (length === undefined && !chunked) return next(); // no body
    const max = (h['content-type'] ?? '').toLowerCase().startsWith('multipart/') ? limits.multipart : limits.parsed;
    if (!chunked) {
      if (Number(length) <= max) return next(); // within: the parsers read it (and check it again)
      res.setHeader('Connection', 'close');
      return next(tooLarge(max));
    }
    // a streamed body: counted chunk by chunk as the HTTP parser hands it on (it calls the request's push)
    let seen = 0;
    const push = req.push;
    req.push = function (chunk: unknown, encoding?: BufferEncoding) {
      if (chunk !== null && seen <= max) {
        seen += (chunk as Buffer).length;
        if (seen > max) {
          refuse(req, res, max);
          return false;
        }
      }
      return seen > max && chunk !== null ? false : push.call(this, chunk, encoding);
    };
    next();
  };
}
