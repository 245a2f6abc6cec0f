import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/compose/emulator.js";
import { browserAvailable, launchChromium, scrollOperations, type RunningBrowser } from "./chromium.js";

const available = browserAvailable();
const REBOUND = "rebound.test";

/**
 * What a hostile page tries against minipod from its own origin (another port of 127.0.0.1, or a
 * name rebound to 127.0.0.1): requests a page may send without asking (no-cors fetches with
 * text/plain or form bodies, form posts into frames), the same with a preflight, and reads.
 * Each attempt's outcome lands in `window.results`; `window.done` when all have run.
 */
const ATTACKS = (target: string) => `
const T = ${JSON.stringify(target)};
const results = (window.results = {});
const attempt = async (name, url, init) => {
  try {
    const r = await fetch(url, init);
    results[name] = { type: r.type, status: r.status, text: r.type === "opaque" ? "" : await r.text() };
  } catch (e) {
    results[name] = { error: String(e) };
  }
};
const formPost = (name, path, enctype, fields) =>
  new Promise((resolve) => {
    const frame = document.createElement("iframe");
    frame.name = name;
    document.body.appendChild(frame);
    const form = document.createElement("form");
    form.method = "POST";
    form.action = T + path;
    form.enctype = enctype;
    form.target = name;
    for (const [k, v] of Object.entries(fields)) {
      const input = document.createElement("input");
      input.name = k;
      input.value = v;
      form.appendChild(input);
    }
    document.body.appendChild(form);
    // The frame loads minipod's answer (a refusal is a page too), however long a busy machine
    // takes. One that never loads keeps the page from being done, and the test's failure shows
    // it "not loaded" among the results.
    results[name] = "not loaded";
    frame.addEventListener("load", () => resolve((results[name] = "loaded")), { once: true });
    form.submit();
  });
(async () => {
  const plain = { method: "POST", mode: "no-cors" };
  await attempt("reset", T + "/_emulator/reset", { ...plain, body: "{}" });
  await attempt("reset-empty", T + "/_emulator/reset", plain);
  await attempt("advance", T + "/_emulator/clock/advance", { ...plain, headers: { "content-type": "text/plain" }, body: '{"ms":3600000}' });
  await attempt("advance-form", T + "/_emulator/clock/advance", { ...plain, headers: { "content-type": "application/x-www-form-urlencoded" }, body: '{"ms":3600000}' });
  await attempt("fault", T + "/_emulator/faults", { ...plain, body: '{"fault":{"type":"http","status":503}}' });
  await attempt("snapshot", T + "/_emulator/snapshots/planted", plain);
  await attempt("reset-json", T + "/_emulator/reset", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  await attempt("fault-json", T + "/_emulator/faults", { method: "POST", headers: { "content-type": "application/json" }, body: '{"fault":{"type":"reset"}}' });
  await attempt("clear-journal", T + "/_emulator/requests", { method: "DELETE" });
  await formPost("form-reset", "/_emulator/reset", "text/plain", { "{}": "" });
  await formPost("form-advance", "/_emulator/clock/advance", "text/plain", { '{"ms":3600000,"pad":"': '"}' });
  await formPost("form-snapshot", "/_emulator/snapshots/planted-by-form", "application/x-www-form-urlencoded", { a: "1" });
  await attempt("jobs", T + "/_emulator/jobs");
  await attempt("jobs-no-cors", T + "/_emulator/jobs", { mode: "no-cors" });
  await attempt("job", T + "/_emulator/jobs/" + ${JSON.stringify("JOB_ID")});
  await attempt("export", T + "/_emulator/export");
  await attempt("panel", T + "/_dashboard/panels/jobs");
  await attempt("dashboard", T + "/");
  results.feed = await new Promise((resolve) => {
    const feed = new EventSource(T + "/_emulator/feed");
    feed.onmessage = feed.onopen = () => { feed.close(); resolve("open"); };
    feed.onerror = () => { feed.close(); resolve("error"); };
  });
  window.done = true;
})();
`;

const page = (script: string) => `<!doctype html><html><body><h1>cat pictures</h1><script>${script}</script></body></html>`;

describe.skipIf(!available)("a page of another origin, in Chromium", { timeout: 90_000 }, () => {
  let chrome: RunningBrowser;
  let emu: Emulator;
  let attacker: Server;
  let attackerUrl: string;
  let lines: string[];
  let jobId: string;
  let attackPage: string;

  beforeAll(async () => {
    // rebound.test resolves to 127.0.0.1, as a name an attacker rebinds would. Chromium's own
    // Local Network Access checks are off: they would stop a page served from a public address
    // from reaching 127.0.0.1 at all, and minipod must hold without them (other browsers, older
    // versions, a page the browser counts as local).
    chrome = await launchChromium([
      `--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`,
      "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights",
    ]);
  });
  afterAll(async () => {
    await chrome?.close();
  });
  beforeEach(async () => {
    lines = [];
    emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "echo", handler: "echo", workersMin: 1, coldStartMs: 0 }] }, logLevel: "info", log: (l) => lines.push(l) });
    const run = await fetch(`${emu.url}/v2/echo/run`, { method: "POST", headers: { authorization: "Bearer k" }, body: JSON.stringify({ input: { secret: "the-input-of-a-job" } }) });
    jobId = ((await run.json()) as { id: string }).id;
    await emu.clock.advance(0);
    attackPage = page(ATTACKS(emu.url).replace("JOB_ID", jobId));
    attacker = createServer((req, res) => {
      res.setHeader("content-type", "text/html");
      if (req.url === "/top-form") {
        // The classic CSRF: a form that posts itself, top level, as the page loads.
        res.end(`<!doctype html><form method="POST" action="${emu.url}/_emulator/reset" enctype="text/plain"><input name="{}" value=""></form><script>document.forms[0].submit()</script>`);
        return;
      }
      res.end(attackPage);
    });
    await new Promise<void>((r) => attacker.listen(0, "127.0.0.1", r));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    await new Promise<void>((r) => attacker.close(() => r()));
    await emu.close();
  });

  const run = async (url: string, prepare?: (p: Page) => Promise<void>) => {
    const context = await chrome.browser.newContext();
    const p = await context.newPage();
    p.setDefaultTimeout(20_000);
    await prepare?.(p);
    await p.goto(url);
    const read = () => p.evaluate(() => (globalThis as unknown as { results: unknown }).results) as Promise<Record<string, { type?: string; status?: number; text?: string; error?: string } | string>>;
    await p.waitForFunction(() => (globalThis as unknown as { done?: boolean }).done === true).catch(async (e) => {
      throw new Error(`${(e as Error).message}\nthe page's attempts so far: ${JSON.stringify(await read())}`);
    });
    const results = await read();
    await context.close();
    return results;
  };

  /** The state a page must not have changed: the job is still there, the clock, faults, snapshots and journal as they were. */
  const expectUntouched = async (clockBefore: number) => {
    const get = async (path: string) => (await (await fetch(`${emu.url}${path}`)).json()) as any;
    expect((await fetch(`${emu.url}/v2/echo/status/${jobId}`, { headers: { authorization: "k" } })).status).toBe(200);
    expect(emu.clock.now()).toBe(clockBefore);
    expect(emu.faults.list()).toEqual([]);
    expect((await get("/_emulator/snapshots")).snapshots).toEqual([]);
    expect(emu.requests().requests.map((r) => r.path)).toContain("/v2/echo/run");
  };

  /** What a page could read: nothing of the emulator's state. */
  const expectNothingRead = (results: Record<string, unknown>) => {
    const text = JSON.stringify(results);
    expect(text).not.toContain("the-input-of-a-job");
    expect(text).not.toContain(`"id":"${jobId}"`);
    expect(text).not.toContain("SQLite format");
    expect(text).not.toContain("<title>minipod");
    expect(results.feed).toBe("error");
  };

  it("on another port of 127.0.0.1 can neither change minipod's state nor read it", async () => {
    const before = emu.clock.now();
    const results = await run(`${attackerUrl}/`);
    await expectUntouched(before);
    expectNothingRead(results);
    // The page's requests did reach minipod, which refused them: simple ones with 403 (another
    // port is same-site, not same-origin), preflights so that their request was never sent.
    const refused = lines.filter((l) => / (POST|GET|OPTIONS|DELETE) \/_(emulator|dashboard)\S* 403 /.test(l) || / GET \/ 403 /.test(l));
    expect(refused.length).toBeGreaterThanOrEqual(15);
    expect(lines.some((l) => / POST \/_emulator\/reset 403 /.test(l))).toBe(true);
    expect(lines.some((l) => / OPTIONS \/_emulator\/reset 403 /.test(l))).toBe(true);
    expect(lines.some((l) => / POST \/_emulator\/reset 200 /.test(l))).toBe(false);
    // The forms were posted, reached minipod and were refused.
    expect([results["form-reset"], results["form-advance"], results["form-snapshot"]]).toEqual(["loaded", "loaded", "loaded"]);
    expect(lines.some((l) => / POST \/_emulator\/snapshots\/planted-by-form 403 /.test(l))).toBe(true);
    expect((results.jobs as { error?: string }).error).toMatch(/TypeError: Failed to fetch/);
    // Cross-Origin-Resource-Policy: even the opaque answer of a no-cors read is withheld.
    expect((results["jobs-no-cors"] as { error?: string }).error).toMatch(/TypeError: Failed to fetch/);
  });

  it("cannot post a form to it at top level", async () => {
    const before = emu.clock.now();
    const context = await chrome.browser.newContext();
    const p = await context.newPage();
    const answer = p.waitForResponse(`${emu.url}/_emulator/reset`);
    await p.goto(`${attackerUrl}/top-form`);
    expect((await answer).status()).toBe(403);
    await context.close();
    await expectUntouched(before);
  });

  it("under a name rebound to 127.0.0.1 (DNS rebinding) reads nothing and changes nothing, though the browser counts it as minipod's own origin", async () => {
    const before = emu.clock.now();
    const origin = `http://${REBOUND}:${emu.port}`;
    // The attacker's DNS first sends the browser to the attacker's server: the page comes from there...
    const results = await run(`${origin}/`, async (p) => {
      await p.route(`${origin}/`, (route) =>
        route.request().isNavigationRequest() ? route.fulfill({ status: 200, contentType: "text/html", body: page(ATTACKS(origin).replace("JOB_ID", jobId)) }) : route.continue(),
      );
    });
    // ...then the name points at 127.0.0.1, and the page's requests, same-origin to the browser, reach minipod.
    await expectUntouched(before);
    expectNothingRead(results);
    expect(results["reset-json"]).toMatchObject({ type: "basic", status: 403 });
    expect((results["reset-json"] as { text: string }).text).toContain(`Host '${REBOUND}:${emu.port}' is not allowed`);
    expect(results.jobs).toMatchObject({ type: "basic", status: 403 });
    expect(results.export).toMatchObject({ type: "basic", status: 403 });
    expect(lines.some((l) => l.includes(`refused POST /_emulator/reset: Host '${REBOUND}:${emu.port}' is not allowed`))).toBe(true);
  });

  it("while the dashboard's own page, and /docs, still drive it", async () => {
    const context = await chrome.browser.newContext();
    const p = await context.newPage();
    p.setDefaultTimeout(20_000);
    await p.goto(`${emu.url}/`);
    await p.waitForSelector('#live[data-state="on"]');
    const before = emu.clock.now();
    await p.click('button[data-advance="60000"]');
    await p.waitForSelector(`#clock-now[data-now="${before + 60_000}"]`);
    // /docs: "Try it out" on POST /_emulator/reset, which takes no parameter but is sent as JSON.
    await p.goto(`${emu.url}/docs`);
    await scrollOperations(p, "operations-Emulator_control-reset");
    await p.click("#operations-Emulator_control-reset .opblock-summary");
    await p.click("#operations-Emulator_control-reset .try-out__btn");
    const reset = p.waitForResponse((r) => r.url() === `${emu.url}/_emulator/reset`);
    await p.click("#operations-Emulator_control-reset .execute");
    expect((await reset).status()).toBe(200);
    expect((await fetch(`${emu.url}/v2/echo/status/${jobId}`, { headers: { authorization: "k" } })).status).toBe(404);
    await context.close();
  });
});
