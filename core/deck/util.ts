/**
 * Small helpers that must work across JavaScript realms: modules loaded at run time may create their
 * objects in another realm than the host's (jest's vm contexts do this), so `instanceof Error` and
 * `=== Object.prototype` are not reliable for values that come from plugins.
 */

/** The message of anything thrown. */
export function errorText(e: unknown): string {
  if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') {
    return (e as { message: string }).message || String((e as { name?: unknown }).name ?? 'Error');
  }
  return String(e);
}

/** An object literal (or Object.create(null)), from any realm. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === null || (Object.getPrototypeOf(proto) === null && Object.prototype.toString.call(v) === '[object Object]');
}

/** A class whose prototype chain reaches some realm's Error. */
export function isErrorClass(cls: unknown): boolean {
  for (let p = (cls as { prototype?: unknown } | null)?.prototype; p; p = Object.getPrototypeOf(p)) {
    const c = (p as { constructor?: { name?: string } }).constructor;
    if (c?.name === 'Error' && Object.getPrototypeOf(p) !== null && Object.getPrototypeOf(Object.getPrototypeOf(p)) === null) return true;
  }
  return false;
}
