/** Sentences made of values: a value that already ends a sentence is not given a second period. */

/**
 * `text` ending a sentence: a period added unless it already ends in `.`, `!`, `?` or `…` (a quote or bracket
 * after it allowed), so a message built from another message never says "..".
 */
export function sentence(text: string): string {
  const t = text.trimEnd();
  return /[.!?…]["'”’)\]]?$/.test(t) ? t : `${t}.`;
}
