import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/compose/emulator.js";
import { browserAvailable, launchChromium, recordedPage, type RunningBrowser } from "./chromium.js";

const available = browserAvailable();
const KEY = "explorer-key";

describe.skipIf(!available)("the GraphQL explorer in Chromium", { timeout: 60_000 }, () => {
  let chrome: RunningBrowser;
  let emu: Emulator;
  beforeAll(async () => {
    chrome = await launchChromium();
    emu = await createEmulator({ clock: "manual", config: { auth: { keys: [{ key: KEY }] } } });
  });
  afterAll(async () => {
    await chrome?.close();
    emu?.close();
  });

  it("runs a query from /docs/graphql with the key of its headers tab, loading nothing from outside", async () => {
    await fetch(`${emu.url}/v2/pods`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ name: "explored", image: "me/x:1", gpu: { id: "NVIDIA A40", count: 1 } }),
    });
    const { page, log } = await recordedPage(chrome.browser);
    const failed: string[] = [];
    page.on("response", async (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.request().method()} ${r.url()} ${(r.request().postData() ?? "").slice(0, 200)} ${(await r.text().catch(() => "")).slice(0, 200)}`);
    });
    // One load and no reload: GraphiQL stores its tabs and its query in localStorage at two
    // different moments, and a reload between them used to open an empty tab (see the next test).
    await page.goto(`${emu.url}/docs/graphql`);
    // A fresh profile has nothing stored: the editor opens on the page's default query.
    await page.locator(".graphiql-query-editor", { hasText: "MyPods" }).waitFor();
    // The key as a user puts it: typed into the Headers tab, open below the query. GraphiQL reads
    // that editor when the query runs.
    const headers = page.locator('section[aria-label="Headers"] .graphiql-editor:not(.hidden) .CodeMirror');
    await headers.click();
    await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${KEY}` }));
    await headers.filter({ hasText: `Bearer ${KEY}` }).waitFor();
    await page.click(".graphiql-execute-button");
    // A locator waits without evaluating a string in the page, which the page's CSP forbids.
    await page.locator(".result-window", { hasText: "explored" }).waitFor({ timeout: 15_000 }).catch(async (e) => {
      throw new Error(`${(e as Error).message}\nresult: ${await page.locator(".result-window").textContent()}\nproblems: ${log.problems.join("\n")}\nrequests: ${log.requests.join("\n")}`);
    });
    const result = await page.locator(".result-window").textContent();
    expect(result).toContain('"desiredStatus": "RUNNING"');
    for (const url of log.requests) expect(url.startsWith(`${emu.url}/`), url).toBe(true);
    expect(failed).toEqual([]);
    expect(log.problems).toEqual([]);
  });

  it("reopens the tab that was open when GraphiQL had stored its tabs but not yet its query", async () => {
    // What GraphiQL 3 leaves in localStorage if the page is reloaded in its first moments: the tabs
    // (written 500 ms after it renders) without the query (written 100 ms after the editor
    // settles, which on a busy machine comes later). On that state GraphiQL itself opens a new,
    // empty "<untitled>" tab over the stored ones.
    const tab = (title: string, query: string) => ({ id: title, hash: null, title, query, variables: null, headers: null, operationName: title, response: null });
    const stored = { activeTabIndex: 1, tabs: [tab("MyPods", "query MyPods { myself { id } }"), tab("Kept", "query Kept { myself { pods { name } } }")] };
    const { page, log } = await recordedPage(chrome.browser);
    // Before any script of the page runs, and on this one load only (it is never reloaded).
    await page.addInitScript(`localStorage.setItem("graphiql:shouldPersistHeaders", "false"); localStorage.setItem("graphiql:tabState", ${JSON.stringify(JSON.stringify(stored))})`);
    await page.goto(`${emu.url}/docs/graphql`);
    // The tabs are decided before the editor shows anything: once it holds the query, they are final.
    await page.locator(".graphiql-query-editor", { hasText: "query Kept" }).waitFor();
    expect(await page.locator(".graphiql-tab").allTextContents()).toEqual(["MyPods", "Kept"].map((t) => expect.stringContaining(t)));
    expect(log.problems).toEqual([]);
  });
});
