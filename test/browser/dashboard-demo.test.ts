import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/compose/emulator.js";
import { browserAvailable, launchChromium, recordedPage, type RunningBrowser } from "./chromium.js";

/** The demo endpoints the package ships (what `npx minipod` serves with no config of its own). */
const DEMO_CONFIG = fileURLToPath(new URL("../../emulator.config.json", import.meta.url));

const available = browserAvailable();

describe.skipIf(!available)("the dashboard of the demo config in Chromium", { timeout: 90_000 }, () => {
  let chrome: RunningBrowser;
  let emu: Emulator;
  beforeAll(async () => {
    [chrome, emu] = await Promise.all([launchChromium(), createEmulator({ port: 0, clock: "manual", config: DEMO_CONFIG })]);
  });
  afterAll(async () => {
    await chrome?.close();
    await emu?.close();
  });

  it("keeps each endpoint id whole at 1024, 1440 and 1920 px", async () => {
    const ids = emu.endpoints().map((e) => e.id);
    expect(ids).toEqual(["echo", "scripted", "text-gen", "llm"]);
    const { page, log } = await recordedPage(chrome.browser, { width: 1024, height: 900 });
    try {
      await page.goto(`${emu.url}/`);
      await page.waitForSelector('#live[data-state="on"]');
      for (const width of [1024, 1440, 1920]) {
        await page.setViewportSize({ width, height: 900 });
        await page.waitForSelector(`article[data-endpoint="${ids.at(-1)}"] h3`);
        // Each id's heading shows its whole text: nothing cut by an ellipsis, nothing outside its card.
        const shown = (await page.evaluate(`[...document.querySelectorAll("article.endpoint")].map((card) => {
          const h3 = card.querySelector("h3");
          const box = h3.getBoundingClientRect(), inCard = card.getBoundingClientRect();
          return { id: card.dataset.endpoint, text: h3.textContent, cut: h3.scrollWidth > h3.clientWidth, inside: box.left >= inCard.left && box.right <= inCard.right && box.width > 0 };
        })`)) as Array<{ id: string; text: string; cut: boolean; inside: boolean }>;
        expect(shown, `${width} px`).toEqual(ids.map((id) => ({ id, text: id, cut: false, inside: true })));
      }
      expect(log.problems).toEqual([]);
    } finally {
      await page.context().close();
    }
  });
});
