/**
 * Writes docs/dashboard.png: the dashboard with a few jobs in every state, a fault rule, webhook
 * deliveries and the request journal. Run with `npx tsx test/browser/screenshot.ts [out.png]`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { createEmulator } from "../../src/compose/emulator.js";
import { launchChromium } from "./chromium.js";

const out = process.argv[2] ?? fileURLToPath(new URL("../../docs/dashboard.png", import.meta.url));

// A local webhook receiver, so the deliveries panel shows real answers.
const receiver = createServer((req, res) => req.resume().on("end", () => res.writeHead(200).end()));
await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/done`;

const emu = await createEmulator({
  port: 0,
  clock: { mode: "manual", start: "2026-06-01T09:00:00.000Z" },
  config: {
    endpoints: [
      { id: "echo", handler: "echo", workersMin: 1, workersMax: 2, coldStartMs: 0 },
      { id: "llm", name: "Text generation", handler: "scripted", workersMin: 1, workersMax: 3, coldStartMs: 1500, idleTimeout: 60 },
      { id: "sdxl", name: "Image generation", handler: "scripted", workersMin: 0, workersMax: 2, coldStartMs: 8000, idleTimeout: 120 },
    ],
  },
});
const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${emu.url}${path}`, {
    method,
    headers: { authorization: "Bearer demo-key", "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await res.json()) as { id: string };
};

const chrome = await launchChromium();
try {
  for (let i = 1; i <= 3; i++) await api("POST", "/v2/echo/run", { input: { message: `hello ${i}` }, ...(i === 1 ? { webhook: hook } : {}) });
  await emu.clock.advance(1200);
  const story = await api("POST", "/v2/llm/run", {
    input: {
      prompt: "Write a haiku about queues",
      sleepMs: 900,
      stream: ["Jobs wait in a line,", " workers wake from a cold start,", " the clock moves; all done."],
      streamIntervalMs: 400,
      output: { tokens: 17 },
    },
    webhook: hook,
  });
  await api("POST", "/v2/llm/run", { input: { prompt: "a very long essay", fail: "CUDA out of memory (tried to allocate 2.00 GiB)" } });
  await emu.clock.advance(2500);
  for (let i = 1; i <= 3; i++) await api("POST", "/v2/sdxl/run", { input: { prompt: `a lighthouse at dawn, variant ${i}`, sleepMs: 45_000 } });
  await api("POST", "/v2/llm/run", { input: { prompt: "summarise the meeting", sleepMs: 120_000 } });
  await emu.clock.advance(9000);
  await api("POST", "/_emulator/faults", { endpoint: "sdxl", operation: "status", fault: { type: "http", status: 503 }, probability: 0.1 });
  await api("POST", "/_emulator/faults", { endpoint: "llm", fault: { type: "worker-crash" }, times: 1 });
  await api("GET", `/v2/llm/status/${story.id}`);
  await api("GET", "/v2/echo/health");

  const context = await chrome.browser.newContext({ viewport: { width: 1400, height: 900 }, colorScheme: "light" });
  const page = await context.newPage();
  await page.goto(`${emu.url}/#job=${story.id}`);
  await page.waitForSelector('#live[data-state="on"]');
  await page.waitForSelector(`#job-body [data-detail="${story.id}"] .timeline li`);
  await page.screenshot({ path: out, fullPage: true });
  await context.close();
  console.log(`wrote ${out}`);
} finally {
  await chrome.close();
  await emu.close();
  receiver.close();
}
