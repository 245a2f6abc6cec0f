import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createEmulator, type Emulator } from "../../src/compose/emulator.js";
import { browserAvailable, launchChromium, recordedPage, scrollOperations, type PageLog, type RunningBrowser } from "./chromium.js";

/** As long as an endpoint id may be (64 characters). */
const LONG = "image-generation-sdxl-refiner-1024px-production-europe-west-4-b";

const config = {
  endpoints: [
    { id: "echo", handler: "echo", workersMin: 1, workersMax: 2, coldStartMs: 0 },
    { id: "slow", handler: "scripted", workersMin: 0, workersMax: 2, coldStartMs: 2000, idleTimeout: 600 },
    { id: "ext", handler: "external" },
    { id: LONG, name: "Image generation with the refiner, 1024 px, production, Europe west", handler: "scripted", workersMin: 1, workersMax: 2, coldStartMs: 0 },
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

  /** `noFeed`: a browser without EventSource, so the page shows only what it fetched itself (a page behind). */
  const open = async (path: string, options: { viewport?: { width: number; height: number }; noFeed?: boolean } = {}) => {
    const recorded = await recordedPage(chrome.browser, options.viewport);
    recorded.page.setDefaultTimeout(15_000);
    opened.push(recorded);
    if (options.noFeed) await recorded.page.addInitScript(() => ((globalThis as Record<string, unknown>).EventSource = undefined));
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
  const hashOf = (page: Page) => page.evaluate("location.hash") as Promise<string>;
  const ping = (worker: string) => fetch(`${emu.url}/v2/ext/ping/${worker}`, { headers: { authorization: "Bearer test-key" } }).then((r) => r.status);

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

  it("submits a job from its form: a bad input is refused with a clear message, a good one makes the job /run makes, listed and opened", async () => {
    const { page } = await dashboard();
    const input = "#submit-form [name=input]";
    const submit = "#submit-form button[type=submit]";
    await page.selectOption("#submit-form [name=endpoint]", "slow");
    await page.fill(input, "{prompt: 1}");
    await page.click(submit);
    await page.waitForSelector("#submit-error:not([hidden])");
    expect(await page.textContent("#submit-error")).toMatch(/^The input is not valid JSON: .*property name/);
    expect(await page.getAttribute(input, "aria-invalid")).toBe("true");
    await page.fill(input, "[1, 2]");
    await page.click(submit);
    await page.waitForSelector("#submit-error >> text=must be a JSON object");
    expect(await page.textContent("#submit-error")).toContain("not an array");
    expect((await api("GET", "/_emulator/jobs")).body.count).toBe(0);

    // A refusal of the server's shows in the same place: here an endpoint no longer served.
    await page.evaluate('const s = document.querySelector("#submit-form [name=endpoint]"); s.add(new Option("gone", "gone")); s.value = "gone"');
    await page.fill(input, '{"a": 1}');
    await page.click(submit);
    await page.waitForSelector("#submit-error >> text=Not submitted");
    expect(await page.textContent("#submit-error")).toContain('"gone"');
    expect((await api("GET", "/_emulator/jobs")).body.count).toBe(0);

    await page.selectOption("#submit-form [name=endpoint]", "slow");
    await page.fill(input, '{"sleepMs": 30000, "note": "from the form"}');
    await page.click(submit);
    await page.waitForSelector("#submit-error", { state: "hidden" });
    const id = (await (await page.waitForSelector("#job-body [data-detail]")).getAttribute("data-detail"))!;
    await page.waitForSelector(`${jobRow(id, "IN_QUEUE")}.selected`);
    expect(await hashOf(page)).toBe(`#job=${id}`);
    expect(await page.textContent("#job-body")).toMatch(/"note": ?"from the form"/);

    // The same job /run makes of the same body, on the same virtual clock.
    const viaRun = await api("POST", "/v2/slow/run", { input: { sleepMs: 30000, note: "from the form" } });
    const [mine, theirs] = await Promise.all([api("GET", `/_emulator/jobs/${id}`), api("GET", `/_emulator/jobs/${viaRun.body.id}`)]);
    expect({ ...mine.body, id: "" }).toEqual({ ...theirs.body, id: "" });
    expect((await api("GET", `/_emulator/jobs/${id}/events`)).body.events[0].cause).toBe("submitted with /run (control API)");
  });

  it("cancels and retries a job from its detail, offering only what the queue allows", async () => {
    const queued = (await api("POST", "/v2/slow/run", { input: { sleepMs: 30_000 } })).body.id;
    const { page } = await dashboard();
    await page.click(`#jobs-body tr[data-job="${queued}"]`);
    await page.waitForSelector(`#job-body [data-detail="${queued}"] [data-job-action="cancel"]`);
    expect(await page.locator('#job-body [data-job-action="retry"]').count()).toBe(0);
    await page.click('#job-body [data-job-action="cancel"]');
    await page.waitForSelector(jobRow(queued, "CANCELLED"));
    await page.waitForSelector(`#job-body [data-detail="${queued}"] .s-cancelled`);
    expect(await page.locator("#job-body [data-job-action]").count()).toBe(0);
    await page.waitForSelector(`#toast:not(.error) >> text="job ${queued} cancelled"`);
    expect((await api("GET", `/v2/slow/status/${queued}`)).body.status).toBe("CANCELLED");

    // Works for 10 s, then fails, on its first attempt only.
    const failing = (await api("POST", "/v2/slow/run", { input: { failAttempts: 1, sleepMs: 10_000 } })).body.id;
    await page.click(`#jobs-body tr[data-job="${failing}"]`);
    await page.waitForSelector(`#job-body [data-detail="${failing}"] [data-job-action="cancel"]`);
    await page.click('button[data-advance="60000"]');
    await page.waitForSelector(jobRow(failing, "FAILED"));
    await page.waitForSelector(`#job-body [data-detail="${failing}"] [data-job-action="retry"]`);
    expect(await page.locator('#job-body [data-job-action="cancel"]').count()).toBe(0);
    await page.click('#job-body [data-job-action="retry"]');
    await page.waitForSelector(jobRow(failing, "IN_PROGRESS"));
    await page.waitForSelector(`#job-body [data-detail="${failing}"] [data-job-action="cancel"]`);
    expect(await page.locator('#job-body [data-job-action="retry"]').count()).toBe(0);
    expect((await api("GET", `/v2/slow/status/${failing}`)).body).toMatchObject({ status: "IN_PROGRESS", retries: 1 });
    expect(await page.locator("#job-body .timeline li").allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining("retried")]));
  });

  it("says why an action was refused when the page was behind, then shows the job as it is", async () => {
    const id = (await api("POST", "/v2/slow/run", { input: { failAttempts: 1, sleepMs: 10_000 } })).body.id;
    await emu.clock.advance(12_000); // cold start, then 10 s of work
    expect((await api("GET", `/v2/slow/status/${id}`)).body.status).toBe("FAILED");
    const { page } = await open(`/#job=${id}`, { noFeed: true });
    await page.waitForSelector(`#job-body [data-detail="${id}"] [data-job-action="retry"]`);
    expect(await page.textContent("#live")).toBe("no live updates in this browser");

    expect((await api("POST", `/v2/slow/retry/${id}`)).status).toBe(200); // the page is not told
    await page.click('#job-body [data-job-action="retry"]');
    await page.waitForSelector("#toast.error >> text=retry refused");
    expect(await page.textContent("#toast")).toBe(`retry refused: job ${id} is IN_PROGRESS; only FAILED or TIMED_OUT jobs can be retried`);
    await page.waitForSelector(`#job-body [data-detail="${id}"] [data-job-action="cancel"]`);
    expect(await page.locator('#job-body [data-job-action="retry"]').count()).toBe(0);
  });

  it("leaves the worker protocol's requests out of the journal unless asked, in the server's listing", async () => {
    expect((await api("POST", "/v2/echo/run", { input: {} })).status).toBe(200);
    // More than the panel's 100 rows: filtered after the listing, the run would be pushed out.
    for (let i = 0; i < 120; i++) expect(await ping("w1")).toBe(200);
    const { page } = await dashboard();
    const rows = (operation: string) => page.locator(`#requests-body tr[data-operation="${operation}"]`).count();
    await page.waitForSelector('#requests-body tr[data-operation="run"]');
    expect(await rows("ping")).toBe(0);
    expect(await page.textContent("#requests-body .table-foot")).toBe("1 request (worker traffic hidden)");

    await page.check("#requests-filter [name=workers]");
    await page.waitForSelector('#requests-body tr[data-operation="ping"]');
    expect(await rows("ping")).toBe(100);
    expect(await rows("run")).toBe(0);
    expect(await page.textContent("#requests-body .table-foot")).toBe("newest 100 of 121");

    // Kept as the panel refreshes, until unticked.
    expect(await ping("w1")).toBe(200);
    await page.click('button[data-advance="1000"]');
    await page.waitForSelector('#requests-body .table-foot >> text="newest 100 of 122"');
    await page.uncheck("#requests-filter [name=workers]");
    await page.waitForSelector('#requests-body tr[data-operation="run"]');
    expect(await rows("ping")).toBe(0);
  });

  it("opens a job and an endpoint's jobs from the address's hash, on load and when it changes", async () => {
    const a = (await api("POST", "/v2/echo/run", { input: { n: "a" } })).body.id;
    const b = (await api("POST", "/v2/slow/run", { input: { n: "b" } })).body.id;
    const { page } = await open(`/#job=${a}`);
    await page.waitForSelector(`#job-body [data-detail="${a}"]`);
    await page.waitForSelector(`#jobs-body tr[data-job="${a}"].selected`);
    await page.evaluate(`location.hash = "#job=${b}"`);
    await page.waitForSelector(`#job-body [data-detail="${b}"]`);
    await page.waitForSelector(`#jobs-body tr[data-job="${b}"].selected`);

    const listed = () => page.locator("#jobs-body tr[data-job]").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-job")));
    await page.evaluate('location.hash = "#endpoint=slow"');
    await page.waitForSelector('article[data-endpoint="slow"].selected');
    await page.waitForSelector(`#jobs-body tr[data-job="${a}"]`, { state: "detached" });
    expect(await listed()).toEqual([b]);
    expect(await page.inputValue("#jobs-filter [name=endpoint]")).toBe("slow");
    expect(await page.inputValue("#submit-form [name=endpoint]")).toBe("slow");
    expect(await hashOf(page)).toBe(`#endpoint=slow&job=${b}`); // the open job stays open

    // An endpoint's name links to its jobs.
    await page.click('article[data-endpoint="echo"] h3 a');
    await page.waitForSelector(`#jobs-body tr[data-job="${a}"]`);
    expect(await listed()).toEqual([a]);
    expect(await hashOf(page)).toBe(`#endpoint=echo&job=${b}`);
    await page.selectOption("#jobs-filter [name=endpoint]", "");
    await page.waitForSelector(`#jobs-body tr[data-job="${b}"]`);
    expect(await listed()).toEqual([b, a]);
    expect(await hashOf(page)).toBe(`#job=${b}`);

    const both = await open(`/#endpoint=slow&job=${b}`);
    await both.page.waitForSelector(`#job-body [data-detail="${b}"]`);
    await both.page.waitForSelector(`#jobs-body tr[data-job="${a}"]`, { state: "detached" });
    expect(await both.page.locator("#jobs-body tr[data-job]").count()).toBe(1);
    expect(await both.page.inputValue("#jobs-filter [name=endpoint]")).toBe("slow");

    const unknown = await open("/#endpoint=nope");
    await unknown.page.waitForSelector('#toast.error >> text=no endpoint "nope" is served here');
  });

  it("fits 1,400 px wide without a horizontal scroll bar, however long the ids, inputs, URLs and names", async () => {
    const word = "x".repeat(600);
    const hook = `http://127.0.0.1:9/${"hooks/".repeat(30)}done?token=${"t".repeat(80)}`;
    const long = (
      await api("POST", `/v2/${LONG}/run`, {
        input: { prompt: word, output: { text: word }, list: Array.from({ length: 20 }, (_, i) => `item-${i}-${word.slice(0, 60)}`) },
        webhook: hook,
      })
    ).body.id;
    await api("POST", `/v2/${LONG}/run`, { input: { fail: `CUDA error: ${word}` } });
    await api("POST", "/_emulator/faults", { endpoint: LONG, operation: "status", fault: { type: "http", status: 503 }, probability: 0.001 });
    await api("GET", `/v2/${LONG}/status/${long}?${"q".repeat(300)}=1`);
    expect(await ping("w".repeat(60))).toBe(200);
    await emu.clock.advance(60_000);
    await vi.waitFor(async () => expect((await api("GET", "/_emulator/webhooks")).body.count).toBeGreaterThan(0), { timeout: 10_000 });

    const { page } = await open(`/#endpoint=${LONG}&job=${long}`, { viewport: { width: 1400, height: 900 } });
    await page.waitForSelector('#live[data-state="on"]');
    await page.check("#requests-filter [name=workers]");
    await page.waitForSelector('#requests-body tr[data-operation="ping"]');
    await page.waitForSelector(`#job-body [data-detail="${long}"] .timeline li`);
    await page.waitForSelector("#webhooks-body tr[data-delivery]");
    await page.waitForSelector("#faults-body tr[data-fault]");
    await page.fill("#submit-form [name=input]", `{"prompt": "${word}"}`);

    const overflow = async () =>
      (await page.evaluate(`({
        width: document.documentElement.clientWidth,
        scrollWidth: document.documentElement.scrollWidth,
        cards: [...document.querySelectorAll(".card, .endpoint")].filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.id || c.dataset.endpoint),
      })`)) as { width: number; scrollWidth: number; cards: string[] };
    const at1400 = await overflow();
    expect(at1400.width).toBeGreaterThan(1350);
    expect(at1400.scrollWidth).toBeLessThanOrEqual(at1400.width);
    expect(at1400.cards).toEqual([]);
    // Just wide enough for the cards side by side (narrower, they stack): still no overflow.
    await page.setViewportSize({ width: 1010, height: 900 });
    const at1010 = await overflow();
    expect(at1010.scrollWidth).toBeLessThanOrEqual(at1010.width);
    expect(at1010.cards).toEqual([]);
    // What is cut keeps its whole text in a title.
    expect(await page.getAttribute(`#jobs-body tr[data-job="${long}"] td:nth-child(2)`, "title")).toBe(LONG);
    // (the token of its query shown redacted, as everywhere)
    expect(await page.getAttribute("#webhooks-body tr[data-delivery] td:nth-child(3)", "title")).toBe(hook.replace(/token=t+$/, "token=[redacted]"));
    expect(await page.getAttribute(`article[data-endpoint="${LONG}"] h3`, "title")).toBe(LONG);
  });

  it("tells job ids apart at 1,280 px, whole in the cells it cuts nothing of, and finds a job by any part of its id", async () => {
    // Six jobs made in the same virtual millisecond (the manual clock): their ids start alike.
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await api("POST", `/v2/${i % 2 ? "slow" : "echo"}/run`, { input: { i } })).body.id);
    await api("POST", "/v2/echo/runsync", { input: { sync: true } });
    const { page } = await open("/", { viewport: { width: 1280, height: 900 } });
    await page.waitForSelector('#live[data-state="on"]');
    for (const id of ids) await page.waitForSelector(`#jobs-body tr[data-job="${id}"]`);
    const cells = (await page.evaluate(`[...document.querySelectorAll("#jobs-body tr[data-job]")].map((tr) => ({
      id: tr.dataset.job,
      shown: tr.cells[0].textContent,
      title: tr.cells[0].title,
      cut: [0, 3, 6].filter((i) => tr.cells[i].scrollWidth > tr.cells[i].clientWidth),
    }))`)) as Array<{ id: string; shown: string; title: string; cut: number[] }>;
    expect(cells).toHaveLength(7);
    // What a row shows tells it from every other, is the id's end, and the id is whole in its title.
    expect(new Set(cells.map((c) => c.shown)).size).toBe(7);
    for (const c of cells) {
      expect(c.id.replace(/-u1$/, "").endsWith(c.shown.replace("…", ""))).toBe(true);
      expect(c.title).toBe(c.id);
    }
    // The job, submitted and worker columns are not cut, nor any heading.
    expect(cells.filter((c) => c.cut.length > 0)).toEqual([]);
    expect(await page.evaluate(`[...document.querySelectorAll("#jobs-body th")].filter((th) => th.scrollWidth > th.clientWidth).map((th) => th.textContent)`)).toEqual([]);

    // Find by id: the end the list shows keeps that one job; Enter opens it, the whole id in its detail.
    const wanted = ids[3]!;
    const shown = cells.find((c) => c.id === wanted)!.shown.replace("…", "");
    await page.fill("#jobs-filter [name=id]", shown);
    await page.waitForSelector(`#jobs-body tr[data-job="${ids[0]}"]`, { state: "detached" });
    expect(await page.locator("#jobs-body tr[data-job]").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-job")))).toEqual([wanted]);
    await page.press("#jobs-filter [name=id]", "Enter");
    await page.waitForSelector(`#job-body [data-detail="${wanted}"]`);
    expect(await page.textContent("#job-body")).toContain(wanted);
    expect(await hashOf(page)).toBe(`#job=${wanted}`);
    // A whole id pasted finds it too; one that matches nothing says so.
    await page.fill("#jobs-filter [name=id]", ids[0]!);
    await page.press("#jobs-filter [name=id]", "Enter");
    await page.waitForSelector(`#job-body [data-detail="${ids[0]}"]`);
    await page.fill("#jobs-filter [name=id]", "not-a-job");
    await page.press("#jobs-filter [name=id]", "Enter");
    await page.waitForSelector('#toast.error >> text=no job\'s id contains "not-a-job"');
    await page.waitForSelector("#jobs-body .empty");
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
    expect(docs.log.requests).toEqual(expect.arrayContaining([expect.stringContaining("/docs/assets/swagger-ui-bundle.js"), `${emu.url}/docs/openapi-3.0.json`]));
  });
});
