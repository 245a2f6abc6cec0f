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

  it("a worker process that called but wrote nothing has an empty log; an unknown id is 404", async () => {
    await e.get("/v2/py/ping/w2");
    expect((await e.get("/v1/pod/w2/logs")).body).toEqual({ container: [], system: [] });
    expect((await e.get("/v1/pod/nobody/logs")).status).toBe(404);
  });

  it("stream=true: the lines since `since` of the source asked for, then each new one, as Server-Sent Events", async () => {
    const key = workerLog("w3");
    e.core.logs.append(key, e.now() - 5000, "container", "before");
    e.core.logs.append(key, e.now(), "container", "greeting world");
    e.core.logs.append(key, e.now(), "system", "not this one");
    const since = encodeURIComponent(new Date(e.now() - 1000).toISOString().replace("Z", "+00:00"));
    const controller = new AbortController();
    const res = await e.app.request(`http://minipod.test/v1/pod/w3/logs?stream=true&type=container&tail=1000&since=${since}`, { headers: { authorization: "Bearer k" }, signal: controller.signal });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const readUntil = async (needle: string) => {
      while (!text.includes(needle)) text += (await reader.read()).value ?? "";
    };
    await readUntil("greeting world");
    e.core.logs.append(key, e.now(), "container", "a new line");
    await readUntil("a new line");
    controller.abort();
    const lines = [...text.matchAll(/^data: (.*)$/gm)].map((m) => (JSON.parse(m[1]!) as { line: string; source: string }).line);
    expect(lines).toEqual(["greeting world", "a new line"]);
  });
});
