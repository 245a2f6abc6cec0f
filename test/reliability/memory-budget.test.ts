import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { ExternalWorkers, type ExternalWorker } from "../../src/domain/external-workers.js";
import { REST_RATE_KEYS_MAX, RUN_PAYLOAD_MAX_BYTES, RUNSYNC_PAYLOAD_MAX_BYTES, WORKER_RECORDS_MAX } from "../../src/domain/limits.js";
import { isEmulatorError } from "../../src/domain/errors.js";
import { RestRateLimiter } from "../../src/domain/rate-limit.js";
import { FakeWall } from "../support/fake-wall.js";
import { inProcess, type InProcess } from "../support/in-process.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
/** The heap in use after a full collection: what is retained, not garbage waiting. */
const retained = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const MB = 1024 * 1024;

/** A /run body of `bytes` bytes: a base64-like image, as image workers get. */
const bodyOf = (bytes: number) => {
  const shell = '{"input":{"image":""}}';
  return `{"input":{"image":"${"A".repeat(bytes - shell.length)}"}}`;
};

let e: InProcess | undefined;
let dir: string | undefined;
afterEach(async () => {
  await e?.close();
  e = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("memory: large bodies are neither journaled whole nor kept in the heap", () => {
  for (const db of ["memory", "file"] as const) {
    it(`hundreds of maximum-size bodies, refused and accepted, journal on, database in ${db}`, { timeout: 120_000 }, async () => {
      if (db === "file") dir = mkdtempSync(join(tmpdir(), "minipod-mem-"));
      // No worker: every accepted job stays queued, the case that held each input in memory.
      e = await inProcess({ db: dir ? join(dir, "state.db") : undefined, config: { endpoints: [{ id: "img", handler: "echo", workersMin: 0, workersMax: 0 }] } });
      const before = retained();
      const accepted = bodyOf(RUN_PAYLOAD_MAX_BYTES - 1024);
      const refused = bodyOf(RUNSYNC_PAYLOAD_MAX_BYTES - 1024);
      for (let i = 0; i < 30; i++) {
        const no = (await e.post("/v2/nope/run", refused)).status;
        expect(no === 404 || no === 413).toBe(true);
        expect((await e.post("/nowhere", refused)).status).toBe(404);
        expect((await e.post("/v2/img/run", bodyOf(RUN_PAYLOAD_MAX_BYTES + 10))).status).toBe(413);
        expect((await e.post("/v2/img/run", accepted)).status).toBe(200);
      }
      const grown = (retained() - before) / MB;
      // 30 × (19 + 19 + 10 + 10) MB went through; before the bounds, most of it stayed in the heap.
      expect(grown).toBeLessThan(48);
      const journal = (await e.get("/_emulator/requests?limit=3")).body;
      const bodies = JSON.stringify(journal);
      expect(bodies).toMatch(/\[\d+ bytes, not kept\]/);
      expect(bodies.length).toBeLessThan(64 * 1024);
      // Nothing acknowledged is lost: every accepted job is there, its input whole.
      const jobs = (await e.get("/_emulator/jobs?endpoint=img&limit=100")).body;
      const listed = jobs.jobs ?? jobs;
      expect(listed.length).toBe(30);
      const one = (await e.get(`/v2/img/status/${listed[0].id}`)).body;
      expect(one.status).toBe("IN_QUEUE");
    });
  }

  it("the journal keeps bodies within journal.maxBodyBytes in all, with a note past it", async () => {
    e = await inProcess({ config: { journal: { maxEntries: 100, maxBodyBytes: 50_000 }, endpoints: [{ id: "q", handler: "echo", workersMin: 0 }] } });
    for (let i = 0; i < 10; i++) expect((await e.post("/v2/q/run", bodyOf(10_000))).status).toBe(200);
    const entries = (await e.get("/_emulator/requests?endpoint=q&limit=10")).body.requests as Array<{ body: unknown }>;
    const notes = entries.filter((r) => typeof r.body === "string");
    // 50,000 bytes hold five bodies of 10,000; the others are noted.
    expect(entries).toHaveLength(10);
    expect(entries.length - notes.length).toBe(5);
    expect(notes[0]!.body).toMatch(/^\[10000 bytes, not kept: the journal's bodies reached journal.maxBodyBytes\]$/);
  });
});

describe("memory: per-key and per-worker state is bounded", () => {
  it("REST quota counters: at most REST_RATE_KEYS_MAX keys, the first counted leaving first", () => {
    const limiter = new RestRateLimiter({ now: () => 0 }, { minute: 60, hour: 3000, day: 50_000 });
    for (let i = 0; i < 40_000; i++) limiter.take(`key-${i}`);
    expect(limiter.size).toBe(REST_RATE_KEYS_MAX);
    // A key still counted keeps its count.
    const last = limiter.take("key-39999");
    expect(last.windows[0]!.remaining).toBe(58);
  });

  it("worker records: a new id takes a lost worker's place; with every record live, it is refused with 429", () => {
    const wall = new FakeWall();
    const workers = new ExternalWorkers(wall, { pingIntervalMs: 1000, lostAfterMs: 3000, pollHoldMs: 20_000 }, (_w: ExternalWorker) => {});
    for (let i = 0; i < WORKER_RECORDS_MAX; i++) workers.touch("ep", `w${i}`, 0, "heartbeat");
    let refused: unknown;
    try {
      workers.touch("ep", "one-more", 0, "heartbeat");
    } catch (err) {
      refused = err;
    }
    expect(isEmulatorError(refused) && refused.code).toBe("RATE_LIMITED");
    expect((refused as Error).message).toMatch(/already has 1000 live workers/);
    // They fall silent and are lost: new ids make room, and the records stay bounded.
    wall.advance(3000);
    for (let i = 0; i < WORKER_RECORDS_MAX; i++) workers.touch("ep", `new-${i}`, 0, "heartbeat");
    expect(workers.records("ep").length).toBe(WORKER_RECORDS_MAX);
    expect(workers.counts("ep").idle).toBe(WORKER_RECORDS_MAX);
    expect(() => workers.touch("ep", "and-one-more", 0, "heartbeat")).toThrow(/live workers/);
  });
});
