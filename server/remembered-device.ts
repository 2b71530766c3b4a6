/**
 * The remembered browser: a browser a user has logged in from carries a signed `labdeck.device` cookie. The
 * failed-login throttle stops an attacker guessing a password; it must not lock the scientist out of a PC
 * shared with them, so such a browser is throttled on its own (core/accounts: `login`'s `device`), never
 * not at all. The cookie is `<username>.<id>.<signature>`: the id tells one browser from another, and the
 * signature (HMAC-SHA256 under the session secret) covers the name, the id and the stamp of the account's
 * password as it is now (`passwordStamp`), so a password change or reset forgets every remembered browser.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { cookieValue } from './session.js';

export const DEVICE_COOKIE = 'labdeck.device';
const YEAR_MS = 365 * 24 * 3600_000;
const ID = /^[\w-]{16,32}$/;

const signature = (secret: string, username: string, id: string, stamp: string) => createHmac('sha256', secret).update(`device:${username}:${id}:${stamp}`).digest('base64url');

/** The browser's remembered-device cookie for `username`, as `login` takes it; undefined when it has none for them. */
export function deviceOf(req: Request, secret: string, username: unknown): { id: string; vouches(stamp: string): boolean } | undefined {
  if (typeof username !== 'string') return undefined;
  const value = cookieValue(req.headers.cookie, DEVICE_COOKIE);
  if (!value) return undefined;
  const sigAt = value.lastIndexOf('.');
  const idAt = value.lastIndexOf('.', sigAt - 1);
  if (idAt < 0 || value.slice(0, idAt) !== username) return undefined;
  const id = value.slice(idAt + 1, sigAt);
  if (!ID.test(id)) return undefined;
  const given = Buffer.from(value.slice(sigAt + 1));
  return {
    id,
    vouches(stamp: string) {
      const expected = Buffer.from(signature(secret, username, id, stamp));
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/** Remember this browser for `username` at the password `stamp` (its id kept when it had one that vouched). */
export function rememberDevice(res: Response, secret: string, username: string, stamp: string, known?: { id: string; vouches(stamp: string): boolean }) {
  const id = known?.vouches(stamp) ? known.id : randomBytes(12).toString('base64url');
  res.cookie(DEVICE_COOKIE, `${username}.${id}.${signature(secret, username, id, stamp)}`, { httpOnly: true, sameSite: 'lax', maxAge: YEAR_MS });
}
