import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { workerLog } from "../../../src/domain/logbook.js";
import { inProcess, type InProcess } from "../../support/in-process.js";

/** `GET /v1/pod/{id}/logs` (the log service's snapshot, RUNPOD_HAPI_URL): what runpod-flash and the SDK 2.x read of a worker. */
let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config: { endpoints: [{ id: "py", handler: "external" }] } });
});
afterEach(() => e.close());

describe("GET /v1/pod/{id}/logs", () => {
  it("answers a worker's lines by source, each led by its ISO time", async () => {
    const at = e.now();
    e.core.logs.append(workerLog("w1"), at, "container", "running in the cloud, greeting world");
    e.core.logs.append(workerLog("w1"), at, "system", "worker started");
    const stamp = new Date(at).toISOString();
    expect((await e.get("/v1/pod/w1/logs")).body).toEqual({ container: [`${stamp} running in the cloud, greeting world`], system: [`${stamp} worker started`] });
    expect((await e.get("/v1/pod/w1/logs?type=container")).body).toEqual({ container: [`${stamp} running in the cloud, greeting world`], system: [] });
  });

  it("a worker process that called but wrote nothing has an empty log; an unknown id and a stream are 404", async () => {
    await e.get("/v2/py/ping/w2");
    expect((await e.get("/v1/pod/w2/logs")).body).toEqual({ container: [], system: [] });
    expect((await e.get("/v1/pod/nobody/logs")).status).toBe(404);
    e.core.logs.append(workerLog("w1"), e.now(), "container", "x");
    const stream = await e.get("/v1/pod/w1/logs?stream=true&type=container");
    expect(stream.status).toBe(404);
    expect(stream.body.detail).toContain("snapshots only");
  });
});
