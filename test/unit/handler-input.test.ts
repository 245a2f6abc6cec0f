import { afterEach, describe, expect, it } from "vitest";
import type { Job } from "../../src/domain/job.js";
import { inProcess, type InProcess } from "../support/in-process.js";

let e: InProcess;
afterEach(() => e?.close());

const runAndFinish = async (endpoint: string, input: Record<string, unknown>): Promise<Job> => {
  const id = (await e.post(`/v2/${endpoint}/run`, { input })).body.id as string;
  await e.advance(0);
  const job = e.core.jobStore.get(id)!;
  expect(job.status).toBe("COMPLETED");
  return job;
};

/**
 * A handler gets its own copy of the job's input, and the job keeps its own copy of the output:
 * two JSON round trips a job. The echo handler only reads its input (`readingInputOnly`), so it is
 * given the stored input itself and its output, that very input, is kept as it is.
 */
describe("a handler's input and output", () => {
  it("are the job's stored input itself for the echo handler, which only reads it", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "echo", handler: "echo", workersMin: 1, coldStartMs: 0 }] } });
    const job = await runAndFinish("echo", { prompt: "hello", n: [1, 2] });
    expect(job.output).toBe(job.input);
    expect(job.input).toEqual({ prompt: "hello", n: [1, 2] });
    expect((await e.get(`/v2/echo/status/${job.id}`)).body.output).toEqual({ prompt: "hello", n: [1, 2] });
  });

  it("are copies for any other handler: what it changes of its input or output later is not the job's", async () => {
    const given: Array<Record<string, unknown>> = [];
    e = await inProcess({
      config: { endpoints: [{ id: "w", handler: "writer", workersMin: 1, coldStartMs: 0 }] },
      handlers: {
        writer: (input) => {
          given.push(input);
          input.changed = true;
          return input;
        },
      },
    });
    const job = await runAndFinish("w", { n: 1 });
    expect(given[0]).not.toBe(job.input);
    expect(job.input).toEqual({ n: 1 });
    expect(job.output).toEqual({ n: 1, changed: true });
    given[0]!.later = true;
    expect(job.output).toEqual({ n: 1, changed: true });
    expect((await e.get(`/v2/w/status/${job.id}`)).body.output).toEqual({ n: 1, changed: true });
  });
});
