import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

/** Debian's Chromium; `.ci/run` installs it with apt-get. */
export const CHROMIUM = "/usr/bin/chromium";

/** Exactly these switches, plus a fresh profile and the DevTools port Playwright connects to. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
] as const;

/**
 * Whether the browser tests can run. In CI (`CI=true`) a missing browser is an error, so the
 * suite cannot pass by skipping; elsewhere the tests are skipped with a message saying why.
 */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === "true") throw new Error(`${CHROMIUM} is missing; .ci/run installs it with apt-get install chromium`);
  console.warn(`browser tests skipped: ${CHROMIUM} is missing (apt-get install chromium)`);
  return false;
}

export interface RunningBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/**
 * Starts Chromium ourselves (so its switches are exactly ours, not Playwright's defaults, plus
 * `extraArgs`) on a fresh profile and DevTools port 0, then connects Playwright to it over CDP.
 */
export async function launchChromium(extraArgs: readonly string[] = []): Promise<RunningBrowser> {
  const profile = mkdtempSync(join(tmpdir(), "minipod-chromium-"));
  const child = spawn(CHROMIUM, [...CHROMIUM_ARGS, ...extraArgs, `--user-data-dir=${profile}`, "--remote-debugging-port=0", "about:blank"], { stdio: ["ignore", "ignore", "pipe"] });
  let browser: Browser | undefined;
  try {
    const ws = await devtoolsUrl(child);
    browser = await chromium.connectOverCDP(ws);
  } catch (e) {
    await stop(child);
    rmSync(profile, { recursive: true, force: true });
    throw e;
  }
  return {
    browser,
    async close() {
      await browser?.close().catch(() => {});
      await stop(child);
      // Chromium's helper processes may still be writing into the profile as it exits: retry,
      // and never fail a test over a temporary folder.
      try {
        rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      } catch {
        /* left for the OS to clean */
      }
    },
  };
}

/** Chromium prints `DevTools listening on ws://...` on stderr once it is ready. */
function devtoolsUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let err = "";
    const timer = setTimeout(() => reject(new Error(`chromium did not start within 20 s:\n${err}`)), 20_000);
    child.stderr!.on("data", (chunk: Buffer) => {
      err += chunk.toString();
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`chromium exited with ${code}:\n${err}`));
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.once("exit", () => {
      clearTimeout(force);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** What a page asked the network for and what its console complained about. */
export interface PageLog {
  requests: string[];
  problems: string[];
}

/**
 * A new page that records every request it makes and every console error (a refused
 * Content-Security-Policy load shows up there even when no request is made).
 */
export async function recordedPage(browser: Browser, viewport = { width: 1440, height: 1000 }): Promise<{ page: Page; log: PageLog }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const log: PageLog = { requests: [], problems: [] };
  page.on("request", (r) => log.requests.push(r.url()));
  page.on("console", (m) => {
    if (m.type() === "error") log.problems.push(m.text());
  });
  page.on("pageerror", (e) => log.problems.push(`page error: ${e.message}`));
  return { page, log };
}

/**
 * Swagger UI virtualizes a long document (150 tags and operations or more): only the operations
 * near the viewport are in the page. Scrolls /docs from top to bottom, half a screen at a time,
 * and answers the ids of every operation block that was rendered on the way (`stopAt`: stop once
 * that one is there, scrolled into view).
 */
export async function scrollOperations(page: Page, stopAt?: string): Promise<Set<string>> {
  await page.waitForSelector(".opblock");
  await page.evaluate("window.scrollTo(0, 0)");
  const seen = new Set<string>();
  let last = -1;
  for (let step = 0; step < 1000; step++) {
    for (const id of await page.locator(".opblock").evaluateAll((els) => els.map((e) => e.id))) seen.add(id);
    if (stopAt !== undefined && seen.has(stopAt)) {
      await page.locator(`#${stopAt}`).scrollIntoViewIfNeeded();
      return seen;
    }
    const y = (await page.evaluate("window.scrollY")) as number;
    if (y === last) break;
    last = y;
    await page.evaluate("window.scrollBy(0, window.innerHeight / 2)");
    // Two frames: the scroll event's render is painted before the rows are read again.
    await page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))");
  }
  if (stopAt !== undefined) throw new Error(`operation ${stopAt} is not on /docs`);
  return seen;
}
