import { describe, expect, it } from "vitest";
import { toRecording } from "../support/recorded-order.js";
import type { Raw } from "../support/recording.js";

/**
 * The recorder's order of a scenario's exchanges (test/support/recorded-order.ts), on exchanges
 * made up here: what timing changes between two recordings of one conversation (when a worker's
 * long poll was sent, how often a stop was sent again) leaves the recording as it was.
 */
const JSON_TYPE = "application/json";

/** The exchanges of a conversation, in the order given (the order they were sent). */
function raws(list: ReadonlyArray<readonly [method: string, path: string, status: number, answer?: unknown, query?: string]>): Raw[] {
  return list.map(([method, path, status, answer, query], seq) => ({
    seq,
    method,
    path,
    query: new URLSearchParams(query ?? ""),
    headers: { authorization: "k" },
    body: [],
    status,
    contentType: answer === undefined ? undefined : JSON_TYPE,
    answer: answer === undefined ? [] : [Buffer.from(JSON.stringify(answer))],
    done: true,
  }));
}

const run = (id: string) => ["POST", "/v2/stop/run", 200, { id, status: "IN_QUEUE" }] as const;
const take = (id: string) => ["GET", "/v2/stop/job-take/s1", 200, { id, input: { do: "sleep" } }, "job_in_progress=0"] as const;
const stop = (...ids: string[]) => ["GET", "/v2/stop/job-stop/s1", 200, { jobsToStop: ids }] as const;
const cancel = (id: string) => ["POST", `/v2/stop/cancel/${id}`, 200, { id, status: "CANCELLED" }] as const;
const advance = ["POST", "/_emulator/clock/advance", 200, { now: 5000 }] as const;

describe("the order of a recording's exchanges", () => {
  it("keeps each stop once, after the take of its job, however often and whenever the worker heard it", () => {
    const a = toRecording(raws([run("job-aaaaaa"), take("job-aaaaaa"), stop("job-aaaaaa"), cancel("job-aaaaaa"), run("job-bbbbbb"), take("job-bbbbbb"), advance, stop("job-bbbbbb")]), {}, undefined);
    // The same conversation: the stop of the first job sent again (twice), the second's held since before its /run and given with a stop sent again.
    const b = toRecording(
      raws([run("job-aaaaaa"), take("job-aaaaaa"), cancel("job-aaaaaa"), stop("job-aaaaaa"), stop("job-aaaaaa"), stop("job-aaaaaa", "job-bbbbbb"), run("job-bbbbbb"), take("job-bbbbbb"), advance]),
      {},
      undefined,
    );
    expect(b).toEqual(a);
    expect(a.exchanges.map((x) => `${x.request.method} ${x.request.path} ${JSON.stringify(x.response.body)}`)).toEqual([
      'POST /v2/stop/run {"id":"{id:1}","status":"string"}',
      'GET /v2/stop/job-take/s1 {"id":"{id:1}","input":{"do":"string"}}',
      'GET /v2/stop/job-stop/s1 {"jobsToStop":["{id:1}"]}',
      'POST /v2/stop/cancel/{id:1} {"id":"{id:1}","status":"string"}',
      'POST /v2/stop/run {"id":"{id:2}","status":"string"}',
      'GET /v2/stop/job-take/s1 {"id":"{id:2}","input":{"do":"string"}}',
      'GET /v2/stop/job-stop/s1 {"jobsToStop":["{id:2}"]}',
      'POST /_emulator/clock/advance {"now":"number"}',
    ]);
  });

  it("names ids by the requests that made them, not by a worker's poll held since before", () => {
    // A stop poll held since before the /run of a second job and of a third, answered with the third's stop.
    const list = raws([run("job-aaaaaa"), take("job-aaaaaa"), stop("job-cccccc"), run("job-bbbbbb"), take("job-bbbbbb"), run("job-cccccc"), take("job-cccccc")]);
    const { exchanges } = toRecording(list, {}, undefined);
    expect(exchanges.filter((x) => x.request.path === "/v2/stop/run").map((x) => (x.response.body as { id: string }).id)).toEqual(["{id:1}", "{id:2}", "{id:3}"]);
  });

  it("marks the test's own control calls, and places a status-sync after the runsync that gave its job", () => {
    const { exchanges } = toRecording(
      raws([
        ["POST", "/v2/work/runsync", 200, { id: "job-dddddd", status: "IN_PROGRESS" }, "wait=90000"],
        advance,
        ["GET", "/v2/work/status-sync/job-dddddd", 200, { id: "job-dddddd", status: "COMPLETED" }, "wait=90000"],
        advance,
      ]),
      {},
      undefined,
    );
    expect(exchanges.map((x) => [x.request.path, x.control ?? false])).toEqual([
      ["/v2/work/runsync", false],
      ["/v2/work/status-sync/{id:1}", false],
      ["/_emulator/clock/advance", true],
      ["/_emulator/clock/advance", true],
    ]);
  });
});
