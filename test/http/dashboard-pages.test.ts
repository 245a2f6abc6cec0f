import { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fetchControl } from "../../src/http/dashboard/data.js";
import { renderPanel } from "../../src/http/dashboard/panels.js";
import { inProcess, type InProcess } from "../support/in-process.js";

const config = {
  endpoints: [
    { id: "echo", handler: "echo", workersMin: 1, workersMax: 2, coldStartMs: 0 },
    { id: "work", handler: "scripted", workersMin: 0, workersMax: 1, coldStartMs: 2000 },
  ],
};

/** Every src= and href= of a page. */
const urlsOf = (html: string) => [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);

describe("the dashboard over HTTP", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config });
  });
  afterEach(() => e.close());

  it("renders endpoints, jobs and the clock on the server, with only local assets and a strict CSP", async () => {
    const run = await e.post("/v2/work/run", { input: { sleepMs: 1000 } });
    const res = await e.get("/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toMatch(/default-src 'self'/);
    expect(res.text).toMatch(/^<!doctype html>/);
    expect(res.text).toContain('data-endpoint="echo"');
    expect(res.text).toContain('data-endpoint="work"');
    expect(res.text).toContain(`data-job="${run.body.id}" data-status="IN_QUEUE"`);
    expect(res.text).toContain(`data-now="${e.now()}" data-mode="manual"`);
    const urls = urlsOf(res.text);
    expect(urls.length).toBeGreaterThan(3);
    // Paths of the emulator, or links within the page (#endpoint=<id>).
    for (const url of urls) expect(url, url).toMatch(/^(\/(?!\/)|#)/);

    for (const url of urls.filter((u) => u.startsWith("/_dashboard/assets/"))) {
      const asset = await e.get(url);
      expect(asset.status, url).toBe(200);
      expect(asset.headers.get("cache-control"), url).toContain("immutable");
      expect(asset.text.length, url).toBeGreaterThan(100);
    }
    const js = await e.get("/_dashboard/assets/dashboard.js");
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toBe("no-cache");
    expect(js.text).not.toMatch(/https?:\/\//);
    const css = await e.get("/_dashboard/assets/dashboard.css");
    expect(css.text).not.toMatch(/url\(|@import|https?:\/\//);
    expect((await e.get("/_dashboard/assets/nope.js")).status).toBe(404);
  });

  it("renders one panel as a fragment, with job details escaped and without the S3 secret", async () => {
    const run = await e.post("/v2/echo/run", {
      input: { prompt: "<script>alert(1)</script>" },
      s3Config: { accessId: "id", accessSecret: "top-secret-s3", bucketName: "b", endpointUrl: "http://127.0.0.1:9000" },
    });
    await e.advance(0);
    const jobs = await e.get("/_dashboard/panels/jobs?endpoint=echo&status=COMPLETED");
    expect(jobs.status).toBe(200);
    expect(jobs.text).toContain(`data-job="${run.body.id}" data-status="COMPLETED"`);
    expect(jobs.text).not.toMatch(/<html/);
    const none = await e.get("/_dashboard/panels/jobs?status=FAILED");
    expect(none.text).toContain("No jobs match");

    const detail = await e.get(`/_dashboard/panels/job?id=${run.body.id}`);
    expect(detail.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(detail.text).not.toContain("<script>alert(1)");
    expect(detail.text).not.toContain("top-secret-s3");
    expect((await e.get("/_dashboard/panels/job?id=gone")).text).toContain("is gone");
  });

  it("refuses unknown panels and bad filters with 400 problem+json", async () => {
    const panel = await e.get("/_dashboard/panels/nope");
    expect(panel.status).toBe(400);
    expect(panel.body.errors[0]).toMatch(/^path\.panel: /);
    const status = await e.get("/_dashboard/panels/jobs?status=DONE");
    expect(status.status).toBe(400);
    expect(status.body.detail).toContain('unknown job status "DONE"');
    expect((await e.get("/_dashboard/panels/jobs?offset=-1")).status).toBe(400);
  });

  it("documents its routes in /openapi.json", async () => {
    const doc = (await e.get("/openapi.json")).body;
    for (const path of ["/", "/docs", "/_emulator/endpoints", "/_emulator/jobs", "/_emulator/jobs/{id}", "/_emulator/feed", "/_dashboard/panels/{panel}"]) {
      expect(doc.paths[path], path).toHaveProperty("get");
    }
  });
});

describe("the control routes the dashboard acts through", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config: { endpoints: [...config.endpoints, { id: "ext", handler: "external" }] } });
  });
  afterEach(() => e.close());

  it("submit the job /run would have made, with the same validation and answers", async () => {
    const body = { input: { prompt: "hello", n: [1, 2] }, webhook: "http://127.0.0.1:9/hook", policy: { ttl: 60_000, executionTimeout: 5000, lowPriority: true } };
    const viaRun = await e.post("/v2/work/run", body);
    const viaControl = await e.post("/_emulator/endpoints/work/run", body);
    expect(viaControl.status).toBe(200);
    expect(Object.keys(viaControl.body).sort()).toEqual(Object.keys(viaRun.body).sort());
    expect(viaControl.body.status).toBe(viaRun.body.status);
    // The stored jobs are alike but for their ids and their place in the queue.
    const { id: _a, queueSeq: seqRun, ...fromRun } = e.core.jobStore.get(viaRun.body.id)!;
    const { id: _b, queueSeq: seqControl, ...fromControl } = e.core.jobStore.get(viaControl.body.id)!;
    expect(fromControl).toEqual(fromRun);
    expect(seqControl).toBe(seqRun + 1);
    expect((await e.get(`/v2/work/status/${viaControl.body.id}`)).body).toEqual({ ...(await e.get(`/v2/work/status/${viaRun.body.id}`)).body, id: viaControl.body.id });
    const events = await e.get(`/_emulator/jobs/${viaControl.body.id}/events`);
    expect(events.body.events[0]).toMatchObject({ to: "IN_QUEUE", cause: "submitted with /run (control API)" });

    for (const bad of [{ input: [1] }, { input: { a: 1 }, webhook: "ftp://x" }, {}, { input: {}, policy: { ttl: 1 } }]) {
      const run = await e.post("/v2/work/run", bad);
      const control = await e.post("/_emulator/endpoints/work/run", bad);
      expect(control.status, JSON.stringify(bad)).toBe(400);
      expect(control.body.errors, JSON.stringify(bad)).toEqual(run.body.errors);
    }
    const unknown = await e.post("/_emulator/endpoints/nope/run", { input: {} });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe((await e.post("/v2/nope/run", { input: {} })).body.detail);
    expect((await e.get("/_emulator/jobs?endpoint=work")).body.count).toBe(2);
  });

  it("cancel and retry by the queue's rules, by job id alone", async () => {
    const queued = (await e.post("/_emulator/endpoints/work/run", { input: {} })).body.id;
    const cancel = await e.post(`/_emulator/jobs/${queued}/cancel`, {});
    expect(cancel.body).toEqual({ id: queued, status: "CANCELLED" });
    // A job already final is answered as it is, as /cancel does.
    expect((await e.post(`/_emulator/jobs/${queued}/cancel`, {})).body).toEqual({ id: queued, status: "CANCELLED" });
    const refused = await e.post(`/_emulator/jobs/${queued}/retry`, {});
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe(`job ${queued} is CANCELLED; only FAILED or TIMED_OUT jobs can be retried`);
    expect(refused.body.detail).toBe((await e.post(`/v2/work/retry/${queued}`)).body.detail);

    const failed = (await e.post("/v2/work/run", { input: { fail: "boom" } })).body.id;
    await e.core.runUntilIdle();
    expect((await e.get(`/v2/work/status/${failed}`)).body.status).toBe("FAILED");
    expect((await e.post(`/_emulator/jobs/${failed}/retry`, {})).body).toEqual({ id: failed, status: "IN_QUEUE" });
    // (The warm worker takes it again at once, and it fails again.)
    expect((await e.get(`/v2/work/status/${failed}`)).body).toMatchObject({ retries: 1 });
    const timeline = (await e.get(`/_emulator/jobs/${failed}/events`)).body.events.map((ev: { cause: string }) => ev.cause);
    expect(timeline).toContain("retried");

    const gone = await e.post("/_emulator/jobs/no-such-job/cancel", {});
    expect(gone.status).toBe(404);
    expect(gone.body.detail).toContain('job "no-such-job" not found');
  });

  it("are same-origin, JSON-only writes, behind the control key when one is set, and documented", async () => {
    const from = { "content-type": "application/json", "sec-fetch-site": "cross-site", origin: "http://127.0.0.1:5173" };
    expect((await e.post("/_emulator/endpoints/work/run", { input: {} }, from)).status).toBe(403);
    expect((await e.post("/_emulator/endpoints/work/run", JSON.stringify({ input: {} }), { "content-type": "text/plain" })).status).toBe(415);
    const job = (await e.post("/v2/work/run", { input: {} })).body.id;
    expect((await e.post(`/_emulator/jobs/${job}/cancel`, {}, from)).status).toBe(403);
    expect((await e.post(`/_emulator/jobs/${job}/cancel`, "{}", { "content-type": "text/plain" })).status).toBe(415);
    expect((await e.get("/_emulator/jobs?endpoint=work")).body).toMatchObject({ count: 1, jobs: [{ id: job, status: "IN_QUEUE" }] });

    const keyed = await inProcess({ config: { ...config, controlKey: "ck" } });
    try {
      expect((await keyed.post("/_emulator/endpoints/work/run", { input: {} })).status).toBe(401);
      expect((await keyed.post("/_emulator/endpoints/work/run", { input: {} }, { authorization: "Bearer ck" })).status).toBe(200);
    } finally {
      keyed.close();
    }

    const doc = (await e.get("/openapi.json")).body;
    for (const path of ["/_emulator/endpoints/{endpoint_id}/run", "/_emulator/jobs/{id}/cancel", "/_emulator/jobs/{id}/retry"]) expect(doc.paths[path], path).toHaveProperty("post");
    expect(doc.paths["/_emulator/requests"].get.parameters.map((p: { name: string }) => p.name)).toContain("worker");
  });

  it("list the request journal with or without the worker protocol's requests, and the panel leaves them out unless asked", async () => {
    await e.post("/v2/echo/run", { input: {} });
    for (let i = 0; i < 3; i++) expect((await e.get("/v2/ext/ping/w1")).status).toBe(200);
    await e.get("/v2/echo/health");
    const ops = async (query: string) => ((await e.get(`/_emulator/requests${query}`)).body as { requests: Array<{ operation?: string }>; count: number });
    const all = await ops("?endpoint=ext");
    expect(all.requests.map((r) => r.operation)).toEqual(["ping", "ping", "ping"]);
    const rest = await ops("?worker=exclude");
    expect(rest.requests.some((r) => r.operation === "ping")).toBe(false);
    expect(rest.requests.map((r) => r.operation)).toEqual(expect.arrayContaining(["run", "health"]));
    // The count and the limit apply after the filter: the newest non-worker entries, not the newest entries.
    const newest = await ops("?worker=exclude&limit=1");
    expect(newest.count).toBe(rest.count);
    expect(newest.requests.map((r) => r.operation)).toEqual([rest.requests.at(-1)!.operation]);
    expect((await ops("?worker=only")).requests.map((r) => r.operation)).toEqual(["ping", "ping", "ping"]);
    expect((await e.get("/_emulator/requests?worker=maybe")).status).toBe(400);

    const hidden = await e.get("/_dashboard/panels/requests");
    expect(hidden.text).not.toContain('data-operation="ping"');
    expect(hidden.text).toContain('data-operation="run"');
    expect(hidden.text).toContain("worker traffic hidden");
    const shown = await e.get("/_dashboard/panels/requests?workers=show");
    expect(shown.text.match(/data-operation="ping"/g)).toHaveLength(3);
    expect(shown.text).not.toContain("worker traffic hidden");
  });
});

describe("panels over control routes that may be missing", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config });
  });
  afterEach(() => e.close());

  const render = async (app: Hono, panel: "faults" | "webhooks" | "requests", query = {}) => String(await renderPanel(panel, { core: e.core, app, query }));
  const noRoutes = () => {
    const app = new Hono();
    app.notFound((c) => c.json({ title: "Not Found", status: 404, detail: `no route for GET ${c.req.path}` }, 404));
    return app;
  };

  it("say 'not available' when the route is missing, and name the failure when it fails", async () => {
    const missing = noRoutes();
    expect(await fetchControl(missing, "/_emulator/faults")).toEqual({ ok: false, reason: "not available in this build" });
    for (const panel of ["faults", "webhooks", "requests"] as const) expect(await render(missing, panel)).toContain("<strong>not available</strong> in this build");

    const failing = new Hono().get("/_emulator/faults", (c) => c.json({ title: "Internal Server Error", status: 500, detail: "disk on fire" }, 500));
    expect(await fetchControl(failing, "/_emulator/faults")).toEqual({ ok: false, reason: "/_emulator/faults answered 500: disk on fire" });
    expect(await render(failing, "faults")).toContain("disk on fire");
  });

  it("render the rules, deliveries and journal the contract describes", async () => {
    const app = noRoutes()
      .get("/_emulator/faults", (c) => c.json({ faults: [{ id: "f1", endpoint: "echo", operation: "run", fault: { type: "http", status: 503 }, times: 2, fired: 1 }] }))
      .get("/_emulator/webhooks", (c) => c.json({ deliveries: [{ jobId: "job-1", url: "http://127.0.0.1:9/hook", attempt: 2, error: "ECONNREFUSED", at: 1000 }], count: 1 }))
      .get("/_emulator/requests", (c) =>
        c.json({ requests: [{ method: "POST", path: `/v2/echo/run?${new URL(c.req.url).search.slice(1)}`, endpoint: "echo", operation: "run", status: 503, at: 2000, durationMs: 3 }], count: 1 }),
      );
    const faults = await render(app, "faults");
    expect(faults).toContain('data-fault="f1"');
    expect(faults).toContain("http status=503");
    expect(faults).toContain('data-fired="1"');
    expect(faults).toContain("2×");
    const webhooks = await render(app, "webhooks");
    expect(webhooks).toContain("http://127.0.0.1:9/hook");
    expect(webhooks).toContain("ECONNREFUSED");
    const requests = await render(app, "requests", { endpoint: "echo", status: "503", id: "ignored" });
    expect(requests).toContain('data-request-status="503"');
    expect(requests).toContain("/v2/echo/run?endpoint=echo&amp;status=503&amp;worker=exclude&amp;limit=100");
  });

  it("show a request's query string, and an error's detail on its status", async () => {
    const entry = { method: "GET", path: "/v2/echo/status/j1", query: "ttl=5", endpoint: "echo", operation: "status", status: 400, at: 2000, durationMs: 1 };
    const app = noRoutes().get("/_emulator/requests", (c) => c.json({ requests: [{ ...entry, response: { title: "Bad Request", status: 400, detail: "ttl too short" } }], count: 1 }));
    const requests = await render(app, "requests");
    expect(requests).toContain("/v2/echo/status/j1?ttl=5");
    expect(requests).toContain('title="ttl too short"');
  });
});

describe("the API docs", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config });
  });
  afterEach(() => e.close());

  it("serve Swagger UI from the installed package, pointed at /openapi.json's 3.0 rendition and nothing else", async () => {
    const page = await e.get("/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toMatch(/connect-src 'self'/);
    const urls = urlsOf(page.text);
    for (const url of urls) expect(url, url).toMatch(/^\/(?!\/)/);
    expect(page.text).not.toMatch(/petstore|https?:\/\/(?!www\.w3\.org)/);
    for (const url of urls.filter((u) => u.startsWith("/docs/assets/"))) expect((await e.get(url)).status, url).toBe(200);

    const init = await e.get("/docs/assets/init.js");
    expect(init.text).toContain('url: "/docs/openapi-3.0.json"');
    expect(init.text).toContain("validatorUrl: null");
    const bundle = await e.app.request("http://minipod.test/docs/assets/swagger-ui-bundle.js");
    expect(bundle.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(500_000);
    const missing = await e.get("/docs/assets/index.html");
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain('no docs asset "index.html"');
  });
});
