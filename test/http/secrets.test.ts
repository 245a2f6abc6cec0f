import { afterEach, describe, expect, it } from "vitest";
import type { HandlerContext } from "../../src/index.js";
import { API_KEY, inProcess, type InProcess } from "../support/in-process.js";

const SECRET = "s3-secret-Zq8w1Lk0";
const s3Config = { accessId: "AKIAEXAMPLE", accessSecret: SECRET, bucketName: "results", endpointUrl: "https://s3.example.test", objectPath: "jobs/" };

/** Tells whether the handler got the secret, without ever returning it. */
const probe = (input: Record<string, unknown>, ctx: HandlerContext) => {
  if (input.fail) throw new Error(`refusing bucket ${ctx.s3Config?.bucketName}`);
  return { secretReachedHandler: ctx.s3Config?.accessSecret === SECRET, bucket: ctx.s3Config?.bucketName };
};

async function* streaming(_input: Record<string, unknown>, ctx: HandlerContext) {
  yield { bucket: ctx.s3Config?.bucketName };
  yield { done: true };
}

describe("secrets stay secret", () => {
  let e: InProcess;
  const logs: string[] = [];
  afterEach(() => e.close());

  it("s3Config.accessSecret reaches the handler, the API key is checked, neither reaches a response or a log line", async () => {
    e = await inProcess({
      config: {
        auth: { keys: [{ key: API_KEY }] },
        endpoints: [
          { id: "s3", handler: "probe", workersMin: 1, workersMax: 1 },
          { id: "streamer", handler: "streaming", workersMin: 1, workersMax: 1 },
        ],
      },
      handlers: { probe, streaming },
      logLevel: "debug",
      log: (line) => logs.push(line),
    });
    const answers: string[] = [];
    const keep = <T extends { text: string }>(r: T) => (answers.push(r.text), r);

    // Accepted submissions, with a webhook that cannot be reached (its failures are logged).
    const run = keep(await e.post("/v2/s3/run", { input: {}, s3Config, webhook: "http://127.0.0.1:9/hook" }));
    const failing = keep(await e.post("/v2/s3/run", { input: { fail: true }, s3Config }));
    const streamed = keep(await e.post("/v2/streamer/run", { input: {}, s3Config }));
    const sync = keep(await e.post("/v2/s3/runsync", { input: {}, s3Config }));
    expect(sync.body).toMatchObject({ status: "COMPLETED", output: { secretReachedHandler: true, bucket: "results" } });
    // Refused submissions that carry the secret next to the mistake.
    keep(await e.post("/v2/s3/run", { input: {}, s3Config: { ...s3Config, bucketName: 7 } }));
    keep(await e.post("/v2/s3/run", { input: [], s3Config, policy: { ttl: "soon" } }));
    keep(await e.post("/v2/s3/run", { input: {}, s3Config: { ...s3Config, accessId: 5 }, webhook: "not a url" }));
    await e.advance(60_000); // jobs finish, webhook retries run out

    const jobs = [run.body.id, failing.body.id, sync.body.id];
    for (const id of jobs) {
      keep(await e.get(`/v2/s3/status/${id}`));
      keep(await e.get(`/v2/s3/status-sync/${id}`));
      keep(await e.get(`/v2/s3/stream/${id}`));
    }
    keep(await e.get(`/v2/streamer/stream/${streamed.body.id}`));
    expect(JSON.parse(answers.at(-1)!).stream).toEqual([{ output: { bucket: "results" } }, { output: { done: true } }]);
    keep(await e.post(`/v2/s3/retry/${failing.body.id}`));
    keep(await e.post(`/v2/s3/cancel/${failing.body.id}`));
    keep(await e.post("/_emulator/snapshots/secrets"));

    // Every other GET route the emulator documents: listings, exports, journals, timelines.
    const doc = (await e.get("/openapi.json")).body as { paths: Record<string, Record<string, unknown>> };
    let swept = 0;
    for (const [template, ops] of Object.entries(doc.paths)) {
      if (!("get" in ops) || /\/(job-take|job-take-batch|ping|feed)\b/.test(template) || template.startsWith("/_dashboard") || template.startsWith("/docs/")) continue;
      for (const id of template.includes("{") ? jobs : [""]) {
        const path = template.replace("{endpoint_id}", "s3").replace(/\{(job_id|id)\}/, id);
        if (path.includes("{")) continue;
        keep(await e.get(path));
        swept++;
      }
    }
    expect(swept).toBeGreaterThan(10);

    for (const text of answers) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(API_KEY);
    }
    expect(logs.length).toBeGreaterThan(10);
    expect(logs.some((l) => /webhook/i.test(l))).toBe(true);
    for (const line of logs) {
      expect(line).not.toContain(SECRET);
      expect(line).not.toContain(API_KEY);
    }
  });
});

describe("secrets of any shape, and URLs with credentials", () => {
  let e: InProcess | undefined;
  afterEach(() => e?.close());

  it("a secret-named key is redacted in the journal whatever its value: an object, a list, a number", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "q", handler: "echo", workersMin: 0 }] } });
    const nested = { v: "nested-secret-9f2" };
    // Refused (accessSecret must be a string) and journaled all the same.
    const refused = await e.post("/v2/q/run", { input: { x: 1 }, s3Config: { ...s3Config, accessSecret: nested } });
    expect(refused.status).toBe(400);
    await e.post("/v2/q/run", { input: { password: ["a-list-secret-1"], apiKey: 123456789, token: { deep: { er: "deep-secret-2" } } } });
    const journal = JSON.stringify((await e.get("/_emulator/requests?endpoint=q")).body);
    for (const leaked of ["nested-secret-9f2", "a-list-secret-1", "123456789", "deep-secret-2"]) expect(journal).not.toContain(leaked);
    expect(journal).toContain('"accessSecret":"[redacted]"');
    expect(journal).toContain('"token":"[redacted]"');
    // The export (a SQLite image) holds none of the journal's secrets either (a job's own input
    // is exported whole, so that an import replays it).
    const image = await e.app.request("http://minipod.test/_emulator/export");
    const bytes = Buffer.from(await image.arrayBuffer()).toString("latin1");
    expect(image.status).toBe(200);
    expect(bytes).not.toContain("nested-secret-9f2");
  });

  it("a webhook URL with credentials is refused with 400 naming the field, and its password is in no journal entry", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "q", handler: "echo", workersMin: 0 }] } });
    for (const webhook of ["http://user:hunter2pass@receiver.test/hook", "https://only-user@receiver.test/"]) {
      const res = await e.post("/v2/q/run", { input: {}, webhook });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/webhook.*may not carry credentials/);
    }
    expect((await e.post("/v2/q/run", { input: {}, webhook: "https://receiver.test/hook?token=abc" })).status).toBe(200);
    const journal = JSON.stringify((await e.get("/_emulator/requests?endpoint=q")).body);
    expect(journal).not.toContain("hunter2pass");
    expect(journal).toContain("http://user:[redacted]@receiver.test/hook");
  });
});
