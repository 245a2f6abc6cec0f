import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

// In-process requests go to http://minipod.test: that is the emulator's own origin here.
const OWN = "http://minipod.test";
const config = { endpoints: [{ id: "echo", handler: "echo", workersMin: 1, coldStartMs: 0 }] };

let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config });
});
afterEach(() => e.close());

const READS = ["/_emulator/jobs", "/_emulator/export", "/_emulator/clock", "/_emulator/requests", "/_dashboard/panels/jobs", "/_dashboard/assets/dashboard.js", "/"];
const json = { "content-type": "application/json" };

describe("the emulator's own surface refuses other origins", () => {
  it("refuses Sec-Fetch-Site cross-site and same-site (another port) on every read and write, with 403 saying why", async () => {
    for (const site of ["cross-site", "same-site"]) {
      const from = { "sec-fetch-site": site, origin: "http://127.0.0.1:5173" };
      for (const path of READS) {
        const res = await e.get(path, from);
        expect(res.status, `${site} ${path}`).toBe(403);
        expect(res.headers.get("content-type")).toContain("application/problem+json");
        expect(res.body.detail).toBe(
          `cross-origin request refused: ${path} answers only pages of its own origin, ${OWN}, and clients outside a browser; this one came from http://127.0.0.1:5173 (Sec-Fetch-Site: ${site}). Drive minipod from your tests, scripts or server code, or from its own dashboard`,
        );
      }
      const job = (await e.post("/v2/echo/run", { input: {} })).body.id;
      for (const [path, body] of [
        ["/_emulator/reset", {}],
        ["/_emulator/clock/advance", { ms: 60_000 }],
        ["/_emulator/faults", { fault: { type: "reset" } }],
        ["/_emulator/snapshots/x", {}],
      ] as const) {
        expect((await e.post(path, body, { ...json, ...from })).status, `${site} ${path}`).toBe(403);
      }
      expect((await e.request("DELETE", "/_emulator/requests", undefined, from)).status).toBe(403);
      // Nothing changed.
      expect((await e.get(`/v2/echo/status/${job}`)).status).toBe(200);
      expect((await e.get("/_emulator/faults")).body.faults).toEqual([]);
      expect((await e.get("/_emulator/snapshots")).body.snapshots).toEqual([]);
    }
  });

  it("serves its own page (same-origin) and the user's own navigation (none)", async () => {
    for (const site of ["same-origin", "none"]) {
      for (const path of READS) expect((await e.get(path, { "sec-fetch-site": site })).status, `${site} ${path}`).toBe(200);
      expect((await e.post("/_emulator/clock/advance", { ms: 1 }, { "sec-fetch-site": site, origin: OWN })).status).toBe(200);
    }
  });

  it("lets a link from another site open the dashboard page, and nothing else, not even in a frame", async () => {
    const navigate = { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" };
    const page = await e.get("/", navigate);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect((await e.get("/", { ...navigate, "sec-fetch-dest": "iframe" })).status).toBe(403);
    expect((await e.get("/_emulator/export", navigate)).status).toBe(403);
    expect((await e.get("/_dashboard/panels/jobs", navigate)).status).toBe(403);
  });

  it("without Sec-Fetch-Site (an older browser), refuses an Origin that is not its own, \"null\" included", async () => {
    for (const origin of ["http://127.0.0.1:5173", "http://evil.example", "null", "http://minipod.test:81", "https://minipod.test", "garbage"]) {
      const res = await e.get("/_emulator/jobs", { origin });
      expect(res.status, origin).toBe(403);
      expect(res.body.detail).toContain(`this one came from ${origin} (Origin)`);
      expect((await e.post("/_emulator/reset", {}, { ...json, origin })).status, origin).toBe(403);
    }
    expect((await e.get("/_emulator/jobs", { origin: OWN })).status).toBe(200);
    expect((await e.get("/_emulator/jobs", { origin: "HTTP://MINIPOD.TEST:80" })).status).toBe(200);
  });

  it("serves clients outside a browser, which send neither header", async () => {
    for (const path of READS) expect((await e.get(path)).status, path).toBe(200);
  });

  it("marks its answers Cross-Origin-Resource-Policy: same-origin, so no other page can embed them", async () => {
    for (const path of READS) expect((await e.get(path)).headers.get("cross-origin-resource-policy"), path).toBe("same-origin");
    expect((await e.get("/_emulator/jobs", { "sec-fetch-site": "cross-site" })).headers.get("cross-origin-resource-policy")).toBe("same-origin");
  });

  it("refuses a control POST that is not JSON with 415, what a form or a text/plain fetch would send", async () => {
    const job = (await e.post("/v2/echo/run", { input: {} })).body.id;
    const types = [undefined, "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonp", "application/problem+json"];
    for (const type of types) {
      for (const [path, body] of [
        ["/_emulator/reset", "{}"],
        ["/_emulator/clock/advance", '{"ms":60000}'],
        ["/_emulator/faults", '{"fault":{"type":"reset"}}'],
        ["/_emulator/snapshots/x", ""],
        ["/_emulator/run-until-idle", ""],
      ]) {
        const res = await e.request("POST", path!, body, { "content-type": type ?? "" });
        expect(res.status, `${type} ${path}`).toBe(415);
        expect(res.body.detail).toBe(
          `POST ${path} changes the emulator's state and needs Content-Type: application/json (a body of {} will do; curl: -H 'content-type: application/json'), got ${type ? `'${type.split(";")[0]}'` : "none"}: a web page cannot send JSON to another origin without asking first`,
        );
      }
    }
    expect((await e.get(`/v2/echo/status/${job}`)).status).toBe(200);
    expect((await e.get("/_emulator/faults")).body.faults).toEqual([]);
    // JSON, with or without a body, a charset or capitals, is taken; DELETE needs no body.
    expect((await e.request("POST", "/_emulator/snapshots/x", undefined, { "content-type": "Application/JSON; charset=utf-8" })).status).toBe(200);
    expect((await e.request("POST", "/_emulator/reset", "", { "content-type": "application/json" })).status).toBe(200);
    expect((await e.request("DELETE", "/_emulator/faults")).status).toBe(200);
  });

  it("refuses other origins before asking for the control key", async () => {
    const keyed = await inProcess({ config: { ...config, controlKey: "ck" } });
    try {
      expect((await keyed.get("/_emulator/jobs", { "sec-fetch-site": "cross-site", authorization: "Bearer ck" })).status).toBe(403);
      expect((await keyed.get("/_emulator/jobs", { "sec-fetch-site": "cross-site" })).status).toBe(403);
      expect((await keyed.get("/_emulator/jobs", { authorization: "Bearer ck" })).status).toBe(200);
    } finally {
      keyed.close();
    }
  });
});

describe("the service routes", () => {
  it("answer any origin's requests that carry an API key, as a server does, and grant no CORS", async () => {
    const from = { "sec-fetch-site": "cross-site", origin: "http://localhost:3000" };
    const run = await e.post("/v2/echo/run", { input: {} }, from);
    expect(run.status).toBe(200);
    expect((await e.get(`/v2/echo/status/${run.body.id}`, from)).status).toBe(200);
    expect(run.headers.get("access-control-allow-origin")).toBeNull();
    // What a page sends without a preflight carries no Authorization header: 401.
    const simple = await e.request("POST", "/v2/echo/run", '{"input":{}}', { authorization: "", "content-type": "text/plain", ...from });
    expect(simple.status).toBe(401);
    // The preflight a page must send with a key is not granted.
    const preflight = await e.request("OPTIONS", "/v2/echo/run", undefined, { ...from, "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    expect(preflight.headers.get("access-control-allow-headers")).toBeNull();
  });

  it("leave /openapi.json and /docs to any origin: they hold no state", async () => {
    const from = { "sec-fetch-site": "cross-site" };
    expect((await e.get("/openapi.json", from)).status).toBe(200);
    expect((await e.get("/docs", from)).status).toBe(200);
  });
});
