/** Pages show every moment in the viewer's time zone, with its name (server/client/time.ts). */
import { localClock, localText } from '../../server/client/time.js';

describe('localText', () => {
  it("writes a moment in the viewer's zone, with the zone's name", () => {
    expect(localText(new Date('2026-11-25T05:17:10.250Z'), 'Europe/Berlin')).toBe('2026-11-25 06:17:10 GMT+1');
    expect(localText(new Date('2026-07-01T23:30:00Z'), 'Europe/Berlin')).toBe('2026-07-02 01:30:00 GMT+2'); // summer time, the next day
    expect(localText(new Date('2026-11-25T05:17:10Z'), 'America/New_York')).toBe('2026-11-25 00:17:10 EST');
    expect(localText(new Date('2026-11-25T00:05:00Z'), 'UTC')).toBe('2026-11-25 00:05:00 UTC'); // midnight is 00, not 24
  });
});

describe('localClock', () => {
  it("gives a live log line's time of day in the viewer's zone, not the UTC digits of the ISO text", () => {
    expect(localClock('2026-11-25T05:17:10.250Z', 'Europe/Berlin')).toBe('06:17:10');
    expect(localClock('2026-11-25T00:05:00Z', 'America/New_York')).toBe('19:05:00');
    expect(localClock('not a time')).toBe('not a time');
  });
});
