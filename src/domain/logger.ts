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
    const time = new Date(now()).toISOString().slice(11, 23);
    write(`${time} ${l.padEnd(5)} ${message}`);
  };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), enabled: (l) => ORDER[l] >= ORDER[level] };
}
