// A Flash build's artifact at the 64 MB bound: its upload (PUT /flash/artifacts/{objectKey}) and a
// worker's download (GET of the same), one at a time, against the real CLI with lib/process-probe.mjs
// (monitorEventLoopDelay, 5 ms resolution, a line every 50 ms): the longest block of minipod's event
// loop while each request was in flight, the wall time, and minipod's RSS above where it started.
// In memory and with a --db file; "idle" is the longest block of the same process doing nothing for
// as long, just before (what the machine's load adds). With --baseline DIR (another checkout, built),
// its CLI runs each round too, right after this one's, so that both see the same load.
// Prints a Markdown table (for bench/RESULTS-flash.md).
//   npm run build && npx tsx bench/flash-artifact.ts [--mb 64] [--rounds 3] [--baseline DIR]
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { benchConfig } from "./lib/config.js";
import { call } from "./lib/http.js";
import { memoryOf, startMinipod } from "./lib/processes.js";
import { readProbe } from "./sections/event-loop.js";

const MB = 1024 * 1024;
const { values } = parseArgs({ options: { mb: { type: "string", default: "64" }, rounds: { type: "string", default: "3" }, baseline: { type: "string" } } });
const bytes = Number(values.mb) * MB;
const rounds = Number(values.rounds);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends `body` as 64 kB writes (as a client streaming a file), draining the answer. */
function put(url: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "PUT", headers: { "content-type": "application/gzip", "content-length": body.length }, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", reject);
    });
    req.on("error", reject);
    for (let i = 0; i < body.length; i += 64 * 1024) req.write(body.subarray(i, i + 64 * 1024));
    req.end();
  });
}

/** GETs `url`, counting the bytes of the answer. */
function get(url: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      let n = 0;
      res.on("data", (d: Buffer) => (n += d.length));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes: n }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

interface Row {
  name: string;
  blockMs: number[];
  wallMs: number[];
  rssUpMb: number[];
}

/** One round of each case on a fresh minipod (`bin`: another build's CLI), its rows under `build`'s name. */
async function measure(db: string | undefined, rows: Map<string, Row>, round: number, build: string, bin?: string): Promise<void> {
  const probeFile = join(tmpdir(), `minipod-bench-probe-${process.pid}-flash.jsonl`);
  rmSync(probeFile, { force: true });
  const server = await startMinipod({ config: await benchConfig([{ id: "echo", handler: "echo" }]), probeFile, probeMs: 50, db, bin });
  const gql = async (query: string) => {
    const res = await call(server.url, "POST", "/graphql", { query });
    if (res.body?.errors) throw new Error(JSON.stringify(res.body.errors));
    return res.body.data;
  };
  const body = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i += 4096) body.writeUInt32LE(i, i);
  const during = async (name: string, run: () => Promise<void>) => {
    await sleep(400);
    const rssBefore = memoryOf(server.child.pid!)?.rss ?? 0;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, memoryOf(server.child.pid!)?.rss ?? 0)), 20);
    const from = Date.now();
    const started = performance.now();
    await run();
    const wall = performance.now() - started;
    clearInterval(sampler);
    await sleep(300);
    const to = Date.now() - 100;
    const block = Math.max(0, ...readProbe(probeFile).filter((l) => l.wall > from && l.wall <= to).map((l) => l.loopMaxMs));
    record(name, block, wall, (peak - rssBefore) / MB);
    return wall;
  };
  const record = (name: string, block: number, wall: number, rssUp: number) => {
    const label = `${build}: ${db ? `${name}, --db file` : name}`;
    const row = rows.get(label) ?? { name: label, blockMs: [], wallMs: [], rssUpMb: [] };
    row.blockMs.push(block);
    row.wallMs.push(wall);
    row.rssUpMb.push(rssUp);
    rows.set(label, row);
  };
  try {
    {
      const r = round;
      // Half a second of doing nothing: what the machine's load alone blocks the loop.
      await sleep(400);
      const idleFrom = Date.now();
      await sleep(500);
      record("idle, 500 ms", Math.max(0, ...readProbe(probeFile).filter((l) => l.wall > idleFrom && l.wall <= Date.now()).map((l) => l.loopMaxMs)), 500, 0);
      const app = (await gql(`mutation { createFlashApp(input: { name: "bench-${r}" }) { id } }`)).createFlashApp;
      const upload = (await gql(`mutation { prepareFlashArtifactUpload(input: { flashAppId: "${app.id}", tarballSize: ${bytes} }) { uploadUrl } }`)).prepareFlashArtifactUpload;
      await during(`upload, ${values.mb} MB (PUT)`, async () => {
        const status = await put(upload.uploadUrl, body);
        if (status !== 200) throw new Error(`PUT answered ${status}`);
      });
      await during(`download, ${values.mb} MB (GET)`, async () => {
        const got = await get(upload.uploadUrl);
        if (got.status !== 200 || got.bytes !== bytes) throw new Error(`GET answered ${got.status} with ${got.bytes} bytes`);
      });
      await during(`app deleted (its ${values.mb} MB artifact freed)`, async () => {
        await gql(`mutation { deleteFlashApp(flashAppId: "${app.id}") }`);
      });
    }
  } finally {
    await server.stop();
    rmSync(probeFile, { force: true });
  }
}

const dir = mkdtempSync(join(tmpdir(), "minipod-bench-flash-"));
const rows = new Map<string, Row>();
const builds: Array<[string, string | undefined]> = [["this build", undefined]];
if (values.baseline) builds.push(["baseline", join(values.baseline, "bin/minipod.js")]);
try {
  for (let r = 0; r < rounds; r++) {
    for (const file of [false, true]) {
      for (const [name, bin] of builds) await measure(file ? join(dir, `${name.replace(/\W/g, "-")}-${r}.db`) : undefined, rows, r, name, bin);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const max = (xs: number[]) => Math.max(...xs);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
process.stdout.write(`${rounds} rounds, load ${loadavg()[0]!.toFixed(2)}, ${new Date().toISOString().slice(0, 10)}\n\n`);
process.stdout.write("| | longest block, worst (ms) | longest block, median (ms) | wall, median (ms) | RSS up, worst (MB) |\n|---|---|---|---|---|\n");
for (const r of [...rows.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
  process.stdout.write(`| ${r.name} | ${max(r.blockMs).toFixed(0)} | ${median(r.blockMs).toFixed(0)} | ${median(r.wallMs).toFixed(0)} | ${max(r.rssUpMb).toFixed(0)} |\n`);
}
