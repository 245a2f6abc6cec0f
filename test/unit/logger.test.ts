import { describe, expect, it } from "vitest";
import { createLogger, timeOfDay } from "../../src/domain/logger.js";
import { VIRTUAL_TIME_MAX_MS } from "../../src/domain/bounds.js";

describe("the log line's time", () => {
  it("is the time of day toISOString writes, for any virtual time", () => {
    const times = [0, 1, 999, 1000, 59_999, 3_599_999, 86_399_999, 86_400_000, 1_764_300_000_123, 1_764_300_000_123.9, VIRTUAL_TIME_MAX_MS];
    for (let i = 0; i < 500; i++) times.push(Math.random() * VIRTUAL_TIME_MAX_MS);
    for (const ms of times) expect(timeOfDay(ms), String(ms)).toBe(new Date(ms).toISOString().slice(11, 23));
  });

  it("starts each line written", () => {
    const lines: string[] = [];
    const log = createLogger("info", (l) => lines.push(l), () => Date.UTC(2026, 10, 28, 9, 5, 7, 42));
    log.info("POST /v2/echo/run 200 0.4ms");
    log.debug("not written");
    expect(lines).toEqual(["09:05:07.042 info  POST /v2/echo/run 200 0.4ms"]);
  });
});
