/** The emulator's log sink; the composition root decides where lines go. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /** Whether lines of this level are written: callers skip building a line nobody reads. */
  enabled(level: Exclude<LogLevel, "silent">): boolean;
}

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** A logger writing `HH:MM:SS.mmm level message` lines at or above `level`, at the time `now()` gives (the virtual clock's). */
export function createLogger(level: LogLevel, write: (line: string) => void, now: () => number): Logger {
  const at = (l: Exclude<LogLevel, "silent">) => (message: string) => {
    if (ORDER[l] < ORDER[level]) return;
    write(`${timeOfDay(now())} ${l.padEnd(5)} ${message}`);
  };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), enabled: (l) => ORDER[l] >= ORDER[level] };
}

const DAY_MS = 86_400_000;
const pad = (n: number, width: number) => String(n).padStart(width, "0");

/** `HH:MM:SS.mmm` of a time (ms since the epoch, UTC), as `toISOString` writes it, without a Date a line. */
export function timeOfDay(ms: number): string {
  const t = ((Math.floor(ms) % DAY_MS) + DAY_MS) % DAY_MS;
  return `${pad(Math.floor(t / 3_600_000), 2)}:${pad(Math.floor(t / 60_000) % 60, 2)}:${pad(Math.floor(t / 1000) % 60, 2)}.${pad(t % 1000, 3)}`;
}
