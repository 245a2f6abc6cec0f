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
