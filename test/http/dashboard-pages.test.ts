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

  it("serve Swagger UI from the installed package, pointed at /openapi.json and nothing else", async () => {
    const page = await e.get("/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toMatch(/connect-src 'self'/);
    const urls = urlsOf(page.text);
    for (const url of urls) expect(url, url).toMatch(/^\/(?!\/)/);
    expect(page.text).not.toMatch(/petstore|https?:\/\/(?!www\.w3\.org)/);
    for (const url of urls.filter((u) => u.startsWith("/docs/assets/"))) expect((await e.get(url)).status, url).toBe(200);

    const init = await e.get("/docs/assets/init.js");
    expect(init.text).toContain('url: "/openapi.json"');
    expect(init.text).toContain("validatorUrl: null");
    const bundle = await e.app.request("http://minipod.test/docs/assets/swagger-ui-bundle.js");
    expect(bundle.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(500_000);
    const missing = await e.get("/docs/assets/index.html");
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain('no docs asset "index.html"');
  });
});
