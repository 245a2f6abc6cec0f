import { buildEmulator } from "../src/compose/emulator.ts";
const JOBS = Number(process.env.JOBS ?? 300);
const SIZE = Number(process.env.SIZE ?? 1_000_000);
const db = process.env.DB;
const { core, app } = await buildEmulator({ config: { endpoints: [{ id: "q", handler: "echo", workersMin: 0, workersMax: 0 }], rateLimits: { enabled: false }, memory: { databaseBytes: 2 * 1024 ** 3 }, snapshots: { maxBytes: 4 * 1024 ** 3 } } as never, ...(db ? { db } : {}) });
const post = (p: string, body: unknown) => app.request(`http://minipod.test${p}`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer k" }, body: JSON.stringify(body) });
for (let i = 0; i < JOBS; i++) {
  const r = await post("/v2/q/run", { input: { i, pad: "x".repeat(SIZE) }, s3Config: { accessId: "A", accessSecret: "S", bucketName: "b", endpointUrl: "https://s3.example.test", objectPath: "p/" } });
  if (r.status !== 200) throw new Error(`run ${r.status} ${await r.text()}`);
}
console.log("filled", (core.db.prepare("PRAGMA page_count").pluck().get() as number) * 4096 / 1e6, "MB");
let r = await post("/_emulator/snapshots/s", {});
console.log("save", r.status, await r.text());
for (let i = 0; i < 10; i++) await post("/v2/q/run", { input: { after: i } });
const mode = process.env.MODE ?? "restore";
for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++) {
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0, maxGap = 0, turns = 0, last = performance.now(), running = true;
  const tick = () => { const now = performance.now(); maxGap = Math.max(maxGap, now - last); last = now; turns++; peak = Math.max(peak, process.memoryUsage().rss); if (running) setImmediate(tick); };
  setImmediate(tick);
  let writes = 0;
  const writer = process.env.WRITE ? setInterval(() => { writes++; void post("/v2/q/run", { input: { w: writes } }); }, 20) : undefined;
  const t0 = performance.now();
  if (mode === "restore") {
    console.time("restore"); r = await post("/_emulator/snapshots/s/restore", {}); console.timeEnd("restore");
    await r.text();
  } else {
    r = await app.request("http://minipod.test/_emulator/export", { headers: { authorization: "Bearer k" } });
    const reader = r.body!.getReader(); let n = 0; for (;;) { const c = await reader.read(); if (c.done) break; n += c.value.length; }
  }
  const took = performance.now() - t0;
  running = false; if (writer) clearInterval(writer);
  console.log(JSON.stringify({ mode, round, status: r.status, tookMs: Math.round(took), maxGapMs: Math.round(maxGap), turns, rssStartMB: Math.round(rss0 / 1e6), peakAboveMB: Math.round((peak - rss0) / 1e6), writes }));
}
core.close();
process.exit(0);
