/**
 * `tsx bench/batch.ts [--jobs N] [--rounds N] [--concurrency N]`: requests per second through a
 * batch against the same jobs through /run, on one minipod (built from src, in this process, on
 * 127.0.0.1 port 0, real clock, echo handler, no cold start), and writes bench/RESULTS-batch.md.
 *
 * Batch: one create with every request (under the 10 MiB limit), finalize, then GET the batch
 * until completed + failed == total, then read every result page by page (1,000 a page).
 * /run: the same inputs POSTed by `concurrency` clients, then each job's /status read once all
 * were accepted, polling again any that was not yet COMPLETED.
 * Both count the time from the first request to the last result read.
 */
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { createEmulator } from "../src/index.js";

const { values } = parseArgs({ options: { jobs: { type: "string", default: "5000" }, rounds: { type: "string", default: "3" }, concurrency: { type: "string", default: "16" } } });
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);
const AUTH = { authorization: "bench-key", "content-type": "application/json" };

async function once() {
  const emu = await createEmulator({
    port: 0,
    log: () => {},
    config: {
      logLevel: "error",
      rateLimits: { enabled: false },
      // The same workers either way: 16 standard, 16 batch.
      endpoints: [{ id: "ep", handler: "echo", workersMin: 16, workersMax: 16, batchWorkersMax: 16, coldStartMs: 0 }],
    },
  });
  const base = `${emu.url}/v2/ep`;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, { method, headers: AUTH, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as any;
  };
  const inputs = Array.from({ length: JOBS }, (_, i) => ({ input: { i, text: `row ${i}` } }));
  try {
    // Through a batch.
    let t = performance.now();
    const b = await call("POST", "/batch", inputs);
    await call("POST", `/batch/${b.id}/finalize`);
    for (;;) {
      const s = await call("GET", `/batch/${b.id}`);
      if (s.requestCompleted + s.requestFailed === s.requestTotal) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    let read = 0;
    for (let offset = 0, more = true; more; offset += 1000) {
      const page = await call("GET", `/batch/${b.id}/requests?offset=${offset}&limit=1000`);
      read += page.requests.length;
      more = page.hasMore;
    }
    if (read !== JOBS) throw new Error(`read ${read} results of ${JOBS}`);
    const batchMs = performance.now() - t;

    // Through /run.
    t = performance.now();
    const ids: string[] = new Array(JOBS);
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < JOBS; i = next++) ids[i] = (await call("POST", "/run", inputs[i])).id;
      }),
    );
    next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < JOBS; i = next++) {
          while ((await call("GET", `/status/${ids[i]}`)).status !== "COMPLETED") await new Promise((r) => setTimeout(r, 1));
        }
      }),
    );
    const runMs = performance.now() - t;
    return { batchMs, runMs };
  } finally {
    await emu.close();
  }
}

const rounds: Array<{ batchMs: number; runMs: number }> = [];
for (let r = 0; r < ROUNDS; r++) {
  rounds.push(await once());
  console.log(`round ${r + 1}: batch ${rounds.at(-1)!.batchMs.toFixed(0)} ms, /run ${rounds.at(-1)!.runMs.toFixed(0)} ms`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const batchMs = median(rounds.map((r) => r.batchMs));
const runMs = median(rounds.map((r) => r.runMs));
const perSecond = (ms: number) => Math.round((JOBS / ms) * 1000);
const text = `# Batch against /run

\`tsx bench/batch.ts --jobs ${JOBS} --rounds ${ROUNDS} --concurrency ${CONCURRENCY}\` on ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, node ${process.version},
${new Date().toISOString().slice(0, 10)}. One minipod in the script's process on 127.0.0.1, real clock, echo handler, 16 standard
and 16 batch workers, no cold start. Each figure is the median of ${ROUNDS} rounds, from the first request to the last result read.

| path | ${JOBS} jobs | requests/s |
|---|---:|---:|
| one batch: create with every request, finalize, poll the batch, read the results 1,000 a page | ${batchMs.toFixed(0)} ms | ${perSecond(batchMs)} |
| \`/run\` × ${JOBS} from ${CONCURRENCY} clients, then \`/status\` of each | ${runMs.toFixed(0)} ms | ${perSecond(runMs)} |

Rounds: ${rounds.map((r) => `batch ${r.batchMs.toFixed(0)} ms / run ${r.runMs.toFixed(0)} ms`).join("; ")}.

The clients run in the same process as minipod (2 cores shared with other work when measured). A batch costs three calls and one result page per 1,000 requests, where \`/run\` costs two calls per job; the
jobs themselves go through the same engine (a batch request is a job carrying its batch id).
`;
writeFileSync(new URL("./RESULTS-batch.md", import.meta.url), text);
console.log(text);
