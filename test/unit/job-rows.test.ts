import { describe, expect, it } from "vitest";
import { queuedJob as job } from "../support/jobs.js";
import { COLUMNS, jobColumns } from "../../src/store/job-rows.js";

describe("a job's row", () => {
  it("takes the input's text for an output that is the input itself (the echo handler's), made once", () => {
    const made: string[] = [];
    const columns = jobColumns((_job, field, value) => {
      made.push(field);
      return JSON.stringify(value);
    });
    const names = COLUMNS.split(", ");
    const input = { prompt: "hello" };
    const echoed = { ...job("a"), input, output: input, status: "COMPLETED" as const };
    const row = columns.values(echoed);
    expect(row[names.indexOf("input")]).toBe('{"prompt":"hello"}');
    expect(row[names.indexOf("output")]).toBe('{"prompt":"hello"}');
    expect(made).toEqual(["input"]);
    // Another output, even an equal one, is made of its own.
    made.length = 0;
    const other = columns.values({ ...echoed, output: { prompt: "hello" } });
    expect(other[names.indexOf("output")]).toBe('{"prompt":"hello"}');
    expect(made).toEqual(["input", "output"]);
    expect(columns.values({ ...echoed, output: undefined })[names.indexOf("output")]).toBeNull();
  });
});
