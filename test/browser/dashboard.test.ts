import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/compose/emulator.js";
import { browserAvailable, launchChromium, recordedPage, scrollOperations, type PageLog, type RunningBrowser } from "./chromium.js";

const config = {
  endpoints: [
    { id: "echo", handler: "echo", workersMin: 1, workersMax: 2, coldStartMs: 0 },
    { id: "slow", handler: "scripted", workersMin: 0, workersMax: 2, coldStartMs: 2000, idleTimeout: 600 },
  ],
};

const available = browserAvailable();

describe.skipIf(!available)("the dashboard and docs in Chromium", { timeout: 90_000 }, () => {
  let chrome: RunningBrowser;
  let emu: Emulator;
  let opened: Array<{ page: Page; log: PageLog }>;

  beforeAll(async () => {
    chrome = await launchChromium();
  });
  afterAll(async () => {
    await chrome?.close();
  });
  beforeEach(async () => {
    emu = await createEmulator({ port: 0, clock: "manual", config });
    opened = [];
  });
  afterEach(async () => {
    for (const { page } of opened) await page.context().close();
    await emu.close();
    // Every page of every test asked only the emulator for anything, and nothing was refused.
    for (const { log } of opened) {
      for (const url of log.requests) expect(url.startsWith(`${emu.url}/`), `request outside the emulator: ${url}`).toBe(true);
      expect(log.problems.filter((p) => /Content Security Policy|page error/.test(p))).toEqual([]);
    }
  });

  const open = async (path: string) => {
    const recorded = await recordedPage(chrome.browser);
    recorded.page.setDefaultTimeout(15_000);
    opened.push(recorded);
    await recorded.page.goto(`${emu.url}${path}`);
    return recorded;
  };

  /** Opens the dashboard and waits until its live feed is connected. */
  const dashboard = async () => {
    const recorded = await open("/");
    await recorded.page.waitForSelector('#live[data-state="on"]');
    return recorded;
  };

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${emu.url}${path}`, {
      method,
      headers: { authorization: "Bearer test-key", "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  const jobRow = (id: string, status: string) => `#jobs-body tr[data-job="${id}"][data-status="${status}"]`;

  it("shows the configured endpoints with their workers and queue depth", async () => {
    const { page } = await dashboard();
    await page.waitForSelector('article[data-endpoint="echo"]');
    expect(await page.locator('article[data-endpoint="echo"] .worker[data-state="idle"]').count()).toBe(1);
    expect(await page.locator('article[data-endpoint="slow"] .worker').count()).toBe(0);
    expect(await page.textContent('article[data-endpoint="slow"] [data-count="IN_QUEUE"]')).toBe("0");
    expect(await page.textContent("#clock-now .clock-time")).toBe(new Date(emu.clock.now()).toISOString().slice(11, 23));
    expect(await page.textContent("#clock-body .mode")).toBe("manual");
  });

  it("shows a job submitted through the API at once, and its progress as the page advances the clock", async () => {
    const { page } = await dashboard();
    await page.evaluate(() => ((globalThis as Record<string, unknown>).sameDocument = true));
    const start = emu.clock.now();

    const run = await api("POST", "/v2/slow/run", { input: { sleepMs: 30_000, note: "from the API" } });
    expect(run.status).toBe(200);
    const id: string = run.body.id;
    await page.waitForSelector(jobRow(id, "IN_QUEUE"));
    await page.waitForSelector('article[data-endpoint="slow"] .worker[data-state="initializing"]');
    expect(await page.textContent('article[data-endpoint="slow"] [data-count="IN_QUEUE"]')).toBe("1");

    await page.click('button[data-advance="1000"]');
    await page.waitForSelector(`#clock-now[data-now="${start + 1000}"]`);
    expect(await page.getAttribute(`#jobs-body tr[data-job="${id}"]`, "data-status")).toBe("IN_QUEUE"); // still cold-starting

    await page.click('button[data-advance="1000"]');
    await page.waitForSelector(jobRow(id, "IN_PROGRESS"));
    await page.waitForSelector('article[data-endpoint="slow"] .worker[data-state="running"]');

    await page.click('button[data-advance="60000"]');
    await page.waitForSelector(jobRow(id, "COMPLETED"));
    await page.waitForSelector('article[data-endpoint="slow"] .worker[data-state="idle"]');
    expect(emu.clock.now()).toBe(start + 62_000);

    await page.click(`#jobs-body tr[data-job="${id}"]`);
    await page.waitForSelector(`#job-body [data-detail="${id}"]`);
    const detail = (await page.textContent("#job-body"))!;
    expect(detail).toMatch(/"note": ?"from the API"/);
    expect(detail).toContain("30 s"); // the run time
    await page.waitForSelector("#job-body .timeline li");
    const timeline = await page.locator("#job-body .timeline li").allTextContents();
    expect(timeline.join("\n")).toMatch(/submitted with \/run[\s\S]*started on worker[\s\S]*handler returned/);

    // "run until idle" finishes whatever waits, from the page too.
    const second = await api("POST", "/v2/slow/run", { input: { sleepMs: 5 * 60_000 } });
    await page.waitForSelector(jobRow(second.body.id, "IN_PROGRESS"));
    await page.click('button[data-action="run-until-idle"]');
    await page.waitForSelector(jobRow(second.body.id, "COMPLETED"));

    expect(await page.evaluate(() => (globalThis as Record<string, unknown>).sameDocument)).toBe(true); // no reload
  });

  it("adds a fault rule from the form, shows it fire, and clears it", async () => {
    const { page } = await dashboard();
    await page.fill("#fault-form [name=endpoint]", "echo");
    await page.fill("#fault-form [name=operation]", "run");
    await page.selectOption("#fault-form [name=type]", "http");
    await page.fill("#fault-form [name=status]", "503");
    await page.fill("#fault-form [name=times]", "1");
    await page.click("#fault-form button[type=submit]");
    await page.waitForSelector('#faults-body tr[data-fault] [data-fired="0"]');
    expect(await page.textContent("#faults-body")).toContain("http status=503");

    expect((await api("POST", "/v2/echo/run", { input: {} })).status).toBe(503);
    expect((await api("POST", "/v2/echo/run", { input: {} })).status).toBe(200); // times: 1

    await page.click('button[data-advance="1000"]'); // any clock move refreshes every panel
    await page.waitForSelector('#faults-body tr.spent [data-fired="1"]');
    await page.waitForSelector('#requests-body tr[data-request-status="503"]');

    await page.click('button[data-action="clear-faults"]');
    await page.waitForSelector("#faults-body >> text=No fault rules");
    expect((await api("GET", "/_emulator/faults")).body.faults).toEqual([]);
  });

  it("renders every operation of /openapi.json at /docs", async () => {
    const doc = (await api("GET", "/openapi.json")).body as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.values(doc.paths).reduce((n, methods) => n + Object.keys(methods).length, 0);
    const { page } = await open("/docs");
    // The page opens on the queue's group.
    await page.waitForSelector(".opblock-tag");
    expect(await page.locator(".opblock-tag").first().getAttribute("data-tag")).toBe("Queue");
    expect((await scrollOperations(page)).size).toBe(operations);
    const paths = await page.locator(".opblock-summary-path").allTextContents();
    expect(paths.map((p) => p.replace(/\u200b/g, ""))).toEqual(expect.arrayContaining(["/_emulator/feed"]));
    await scrollOperations(page, "operations-Queue-run");
    await page.click("#operations-Queue-run .opblock-summary");
    await page.waitForSelector("#operations-Queue-run .try-out__btn");
  });

  it("loads nothing from outside the emulator, on the dashboard or the docs", async () => {
    await api("POST", "/v2/echo/run", { input: { n: 1 } });
    const board = await dashboard();
    await board.page.click("#jobs-body tr[data-job]");
    await board.page.waitForSelector("#job-body [data-detail]");
    const docs = await open("/docs");
    await scrollOperations(docs.page, "operations-Queue-run");
    await docs.page.click("#operations-Queue-run .opblock-summary");
    await docs.page.waitForSelector("#operations-Queue-run .try-out__btn");

    for (const { log } of [board, docs]) {
      expect(log.requests.length).toBeGreaterThan(2);
      for (const url of log.requests) expect(url.startsWith(`${emu.url}/`), url).toBe(true);
      expect(log.problems).toEqual([]);
    }
    expect(board.log.requests).toEqual(expect.arrayContaining([expect.stringContaining("/_dashboard/assets/dashboard.js"), `${emu.url}/_emulator/feed`]));
    expect(docs.log.requests).toEqual(expect.arrayContaining([expect.stringContaining("/docs/assets/swagger-ui-bundle.js"), `${emu.url}/openapi.json`]));
  });
});
