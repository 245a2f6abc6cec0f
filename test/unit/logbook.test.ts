import { describe, expect, it } from "vitest";
import { LOG_LINES_KEPT, LogBook, type LogLine, workerLog } from "../../src/domain/logbook.js";

describe("the log book", () => {
  it("keeps a job's lines as their parts and words them when read, in order with the other lines", () => {
    const book = new LogBook();
    const key = workerLog("w1");
    const heard: Array<LogLine | undefined> = [];
    book.append(key, 1000, "system", "worker ready: taking jobs");
    book.subscribe(key, (line) => heard.push(line));
    book.appendJob(key, 2000, "started", "job-1", 1);
    book.append(key, 2100, "container", "loading model");
    book.appendJob(key, 2500, "completed", "job-1", 500);
    const lines = [
      { at: 1000, source: "system", line: "worker ready: taking jobs" },
      { at: 2000, source: "container", line: "job job-1 started (attempt 1)" },
      { at: 2100, source: "container", line: "loading model" },
      { at: 2500, source: "container", line: "job job-1 completed in 500 ms" },
    ];
    expect(book.lines(key)).toEqual(lines);
    // A subscriber hears each new line worded, as a read gives it.
    expect(heard).toEqual(lines.slice(1));
    expect(book.size).toBe(4);
    expect(book.count(key)).toBe(4);
    expect(book.count(workerLog("none"))).toBe(0);
  });

  it("cuts a long log to its newest lines, job lines and others alike", () => {
    const book = new LogBook();
    const key = workerLog("w2");
    for (let i = 0; i < LOG_LINES_KEPT + 1500; i++) {
      if (i % 2 === 0) book.appendJob(key, i, "started", `j${i}`, 1);
      else book.append(key, i, "container", `line ${i}`);
    }
    const lines = book.lines(key);
    expect(lines).toHaveLength(LOG_LINES_KEPT);
    expect(book.count(key)).toBe(LOG_LINES_KEPT);
    const last = LOG_LINES_KEPT + 1499;
    expect(lines[lines.length - 1]).toEqual({ at: last, source: "container", line: `line ${last}` });
    expect(lines[lines.length - 2]).toEqual({ at: last - 1, source: "container", line: `job j${last - 1} started (attempt 1)` });
    expect(lines[0]!.at).toBe(last - LOG_LINES_KEPT + 1);
  });
});
