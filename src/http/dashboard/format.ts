/** How the dashboard writes times, durations and ids; all times are the virtual clock's, in UTC. */

/** `HH:MM:SS.mmm` of a virtual epoch ms (UTC, like the log lines). */
export function clockTime(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}

/** `YYYY-MM-DD` of a virtual epoch ms (UTC). */
export function clockDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Full ISO 8601, for tooltips. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** A time field of another route: epoch ms or an ISO string, shown as a clock time. */
export function anyTime(v: unknown): string {
  if (typeof v === "number" && Number.isFinite(v)) return clockTime(v);
  if (typeof v === "string") {
    const parsed = Date.parse(v);
    return Number.isNaN(parsed) ? v : clockTime(parsed);
  }
  return "";
}

/** `850 ms`, `12.5 s`, `3 min 2 s`, `5 h 10 min`, `2 d 3 h`. */
export function duration(ms: number | undefined): string {
  if (ms === undefined) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return pair(Math.floor(s / 60), "min", s % 60, "s");
  if (s < 86_400) return pair(Math.floor(s / 3600), "h", Math.floor((s % 3600) / 60), "min");
  return pair(Math.floor(s / 86_400), "d", Math.floor((s % 86_400) / 3600), "h");
}

const pair = (a: number, ua: string, b: number, ub: string) => (b === 0 ? `${a} ${ua}` : `${a} ${ua} ${b} ${ub}`);

/**
 * The part of a long id that tells it from the others: its end (`…6af1c24c`), the service's
 * suffix (`-u1`, the same on every job) left out. A job id starts with the time it was made, the
 * same for every job of a burst; it ends in random digits.
 */
export function shortId(id: string): string {
  if (id.length <= 16) return id;
  const body = id.replace(/-[a-z]\d+$/, "");
  return `…${body.slice(-8)}`;
}

/** `YYYY-MM-DD HH:MM:SS.mmm` (UTC), for times that may fall on another day (expiry, retention). */
export function dateTime(ms: number): string {
  return `${clockDate(ms)} ${clockTime(ms)}`;
}

/** Pretty JSON for a `<pre>`, cut at `max` characters so a 10 MB input cannot freeze the page. */
export function prettyJson(v: unknown, max = 100_000): string {
  const flat = JSON.stringify(v) ?? "undefined";
  // Small values (a stream chunk's text) read best on one line.
  const text = flat.length <= 72 ? flat : JSON.stringify(v, null, 2);
  return text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters)` : text;
}
