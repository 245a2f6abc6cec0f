import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { eventually, pythonAvailable, queue, startPyWorker, type PyWorker } from "../support/python.js";

/**
 * A batch run by the service's own worker runtime (as published, unchanged): one worker process
 * started as a batch worker (its job-take asks for the endpoint's batch requests), one as a
 * standard worker. The batch's jobs carry the batch id, which the runtime puts in its log lines.
 */
const available = pythonAvailable();

describe.skipIf(!available)("a batch on the service's worker runtime", { timeout: 60_000 }, () => {
  let emu: Emulator;
  let batchWorker: PyWorker;
  const AUTH = { authorization: "test-key", "content-type": "application/json" };

  beforeAll(async () => {
    emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "py", handler: "external" }], externalWorkers: { pingIntervalMs: 1000 } } });
    startPyWorker(emu, { endpoint: "py", workerId: "std-1" });
    batchWorker = startPyWorker(emu, { endpoint: "py", workerId: "bw-1", batch: true, env: { RUNPOD_LOG_LEVEL: "DEBUG" } });
  });
  afterAll(() => emu?.close());

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${emu.url}/v2/py${path}`, { method, headers: AUTH, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as any;
  };

  it("runs the batch's requests on the batch worker, with the batch id; /run traffic on the standard worker", async () => {
    const b = await call("POST", "/batch", [...[1, 2].map((value) => ({ input: { do: "echo", value } })), { input: { do: "raise", message: "bad row" } }]);
    await call("POST", `/batch/${b.id}/finalize`);
    const run = await queue(emu, "py").run({ do: "echo", value: "live" });
    expect(await queue(emu, "py").final(run)).toMatchObject({ status: "COMPLETED", output: { echo: "live" }, workerId: "std-1" });

    const done = await eventually(async () => {
      const s = await call("GET", `/batch/${b.id}`);
      return s.endedAt !== undefined ? s : undefined;
    }, 30_000, "the batch's end");
    expect(done).toMatchObject({ status: "FINALIZED", requestTotal: 3, requestCompleted: 2, requestFailed: 1 });
    const page = await call("GET", `/batch/${b.id}/requests`);
    expect(page.requests.slice(0, 2).map((r: { output: unknown }) => r.output)).toEqual([1, 2].map((echo) => ({ echo })));
    for (const r of page.requests) expect(r.workerId).toBe("bw-1");
    expect(JSON.parse(page.requests[2].error)).toMatchObject({ error_message: "bad row", worker_id: "bw-1" });

    // The runtime read the batch id from each job and put it in its log lines.
    await batchWorker.waitForLine(new RegExp(`\\[batchId=${b.id}\\]`));
    const take = emu.requests({ endpoint: "py", operation: "job-take", status: 200 }).requests.find((r) => r.path.includes("bw-1"));
    expect(take?.query ?? take?.path).toContain("pool=batch");
  });
});
