/**
 * How long `/docs` takes to draw, in Debian's Chromium driven by playwright-core as the browser
 * tests launch it, with Swagger UI reading /openapi.json as published (OpenAPI 3.1) beside
 * reading its 3.0 rendition (/docs/openapi-3.0.json, what the page reads): the same page, the
 * other document served in its place. Rounds alternate the two, so that whatever else the machine
 * does falls on both alike. Per round: "ready", from navigation to the first operation drawn;
 * "open", from a click on POST /run to its "Try it out" button; "open 2", the same for GET /status.
 * Prints a table and writes bench/RESULTS-docs.md.
 *
 *   npx tsx bench/docs-page.ts [--rounds 5]
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createEmulator } from "../src/compose/emulator.js";
import { launchChromium } from "../test/browser/chromium.js";

const { values } = parseArgs({ options: { rounds: { type: "string" } } });
const rounds = Number(values.rounds ?? 5);

const emu = await createEmulator({ port: 0, clock: "manual", config: { endpoints: [{ id: "echo", handler: "echo" }] } });
const chrome = await launchChromium();
const published = await (await fetch(`${emu.url}/openapi.json`)).text();
const variants = [
  { name: "OpenAPI 3.1 (/openapi.json)", body: published },
  { name: "OpenAPI 3.0 (/docs/openapi-3.0.json)", body: undefined },
];
type Times = { ready: number; open: number; open2: number };
const times = new Map<string, Times[]>(variants.map((v) => [v.name, []]));
const load: number[] = [];

/** Milliseconds from the call to the selector's element being in the page. */
async function timed(act: () => Promise<unknown>, until: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await act();
  await until();
  return Math.round(performance.now() - t);
}

for (let round = 1; round <= rounds; round++) {
  load.push(loadavg()[0]!);
  for (const v of round % 2 ? variants : [...variants].reverse()) {
    const context = await chrome.browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await context.newPage();
    page.setDefaultTimeout(180_000);
    if (v.body !== undefined) await page.route(`${emu.url}/docs/openapi-3.0.json`, (r) => r.fulfill({ status: 200, contentType: "application/json", body: v.body }));
    const ready = await timed(
      () => page.goto(`${emu.url}/docs`),
      () => page.waitForSelector(".opblock"),
    );
    const open = await timed(
      () => page.click("#operations-Queue-run .opblock-summary"),
      () => page.waitForSelector("#operations-Queue-run .try-out__btn"),
    );
    const open2 = await timed(
      () => page.click("#operations-Queue-status .opblock-summary"),
      () => page.waitForSelector("#operations-Queue-status .try-out__btn"),
    );
    times.get(v.name)!.push({ ready, open, open2 });
    console.log(`round ${round}: ${v.name}: ready ${ready} ms, open ${open} ms, open 2 ${open2} ms`);
    await context.close();
  }
}
await chrome.close();
await emu.close();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const row = (name: string, key: keyof Times) => {
  const xs = times.get(name)!.map((t) => t[key]);
  return `${median(xs)} (${Math.min(...xs)} to ${Math.max(...xs)})`;
};
const table = [
  "| document Swagger UI reads | ready, ms | open POST /run, ms | open GET /status, ms |",
  "| --- | --- | --- | --- |",
  ...variants.map((v) => `| ${v.name} | ${row(v.name, "ready")} | ${row(v.name, "open")} | ${row(v.name, "open2")} |`),
].join("\n");
console.log(`\n${table}`);
const report = `# /docs: Swagger UI on the 3.1 document and on its 3.0 rendition

\`npx tsx bench/docs-page.ts --rounds ${rounds}\`, ${new Date().toISOString().slice(0, 10)}; ${cpus().length} cores, load average
${Math.min(...load).toFixed(1)} to ${Math.max(...load).toFixed(1)} (1 min) during the run. Median (range) of ${rounds} rounds, the two
alternating; Debian's Chromium, swagger-ui-dist as installed. "ready": from navigation to the first
operation drawn; "open": from a click on an operation to its "Try it out" button.

${table}

Swagger UI 5 sends an OpenAPI 3.1 document through swagger-client's ApiDOM strategy: on load (for
\`components/securitySchemes\`) and again for every operation opened, it turns the whole document
into ApiDOM elements, normalizes it and dereferences the part asked for, which on minipod's
document (about 370 kB, 180 operations, 110 schemas, a thousand \`$ref\`s) is most of the time
above. A 3.0 document goes through its older resolver, which resolves the part asked for in place.
`;
writeFileSync(join(import.meta.dirname, "RESULTS-docs.md"), report);
