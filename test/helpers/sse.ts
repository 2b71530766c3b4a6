/** Server-sent events as the tests read them from a live stream (GET /app/executions/events). */

export interface SseEvent {
  event: string;
  data: Record<string, unknown> & { [k: string]: unknown };
}

/**
 * The whole events in `buffer` (each ends with a blank line), parsed, and what is left of an event still
 * arriving: feed the rest back with the next chunk.
 */
export function takeEvents(buffer: string): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  let cut: number;
  while ((cut = buffer.indexOf('\n\n')) >= 0) {
    const block = buffer.slice(0, cut);
    buffer = buffer.slice(cut + 2);
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (event && data) events.push({ event, data: JSON.parse(data) });
  }
  return { events, rest: buffer };
}
