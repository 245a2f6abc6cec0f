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
    // The key as a user puts it: GraphiQL keeps the headers tab in localStorage.
    await page.goto(`${emu.url}/docs/graphql`);
    await page.evaluate(`localStorage.setItem("graphiql:headers", ${JSON.stringify(JSON.stringify({ Authorization: `Bearer ${KEY}` }))})`);
    await page.reload();
    await page.waitForSelector(".graphiql-execute-button");
    // The editor fills in its default query a moment after the button shows: run it once it has.
    await page.locator(".graphiql-query-editor", { hasText: "MyPods" }).waitFor({ timeout: 15_000 });
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
});
