import Database from "better-sqlite3";
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDb } from "../../src/store/db.js";
import { forStarts, startCli, type RunningCli } from "../support/cli.js";
import { inProcess } from "../support/in-process.js";

const AUTH = { authorization: "Bearer test-key", "content-type": "application/json" };
const CONFIG = {
  logLevel: "warn",
  rateLimits: { enabled: false },
  endpoints: [
    { id: "echo", handler: "echo", workersMin: 2, workersMax: 2, coldStartMs: 0 },
    // Never finishes on the manual clock: its two workers stay busy, the rest waits in the queue.
    { id: "slow", handler: "scripted", workersMin: 2, workersMax: 2, coldStartMs: 0 },
  ],
};

interface Ack {
  id: string;
  endpoint: string;
}

interface Row {
  id: string;
  endpoint_id: string;
  status: string;
  retries: number;
  output: string | null;
}

/** The jobs of a database file as they are on disk (read from a copy, so the original stays untouched). */
function readJobs(dir: string, file: string): Map<string, Row> {
  const copy = join(dir, "inspect.db");
  for (const suffix of ["", "-wal"]) if (existsSync(file + suffix)) copyFileSync(file + suffix, copy + suffix);
  const db = new Database(copy);
  try {
    return new Map(db.prepare<[], Row>("SELECT id, endpoint_id, status, retries, output FROM jobs").all().map((r) => [r.id, r]));
  } finally {
    db.close();
  }
}

describe("durability on a file database", () => {
  let dir: string;
  let cfg: string;
  const running: RunningCli[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "minipod-durability-"));
    cfg = join(dir, "config.json");
    writeFileSync(cfg, JSON.stringify(CONFIG));
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => c.stop("SIGKILL")));
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps every job whose /run was answered 200 across kill -9, and re-queues the running ones", async () => {
    const db = join(dir, "state.db");
    const first = await startCli(["--config", cfg, "--db", db, "--clock", "manual"]);
    running.push(first);

    // 16 clients submit at full speed; the process is killed while they are still sending.
    const acks: Ack[] = [];
    let killed = false;
    let enough!: () => void;
    const acknowledged400 = new Promise<void>((resolve) => (enough = resolve));
    const client = async (lane: number) => {
      for (let i = 0; !killed && i < 2000; i++) {
        const endpoint = (lane + i) % 4 === 0 ? "slow" : "echo";
        try {
          const res = await fetch(`${first.url}/v2/${endpoint}/run`, { method: "POST", headers: AUTH, body: JSON.stringify({ input: { lane, i, sleepMs: 3_600_000 } }) });
          const body = (await res.json()) as { id: string };
          if (res.status === 200 && acks.push({ id: body.id, endpoint }) === 400) enough();
        } catch {
          return; // the server is gone
        }
      }
    };
    const clients = Array.from({ length: 16 }, (_, lane) => client(lane));
    // Killed once 400 jobs are acknowledged (or the clients have sent all they had).
    await Promise.race([acknowledged400, Promise.all(clients)]);
    first.proc.kill("SIGKILL");
    killed = true;
    expect(await first.stop()).toBe(null); // died by the signal, not by exiting
    await Promise.all(clients);
    expect(acks.length).toBeGreaterThanOrEqual(400);

    // On disk: every acknowledged job, in the state it had when the process died.
    const onDisk = readJobs(dir, db);
    const missing = acks.filter((a) => !onDisk.has(a.id));
    expect(missing, "acknowledged jobs missing from the file").toEqual([]);
    const wasRunning = [...onDisk.values()].filter((r) => r.status === "IN_PROGRESS");
    expect(wasRunning.filter((r) => r.endpoint_id === "slow").length).toBe(2);

    const second = await startCli(["--config", cfg, "--db", db, "--clock", "manual"]);
    running.push(second);
    expect(second.stdout()).toContain(`recovered   ${wasRunning.length} job(s)`);
    await second.advance(0);

    for (const ack of acks) {
      const before = onDisk.get(ack.id)!;
      const res = await fetch(`${second.url}/v2/${ack.endpoint}/status/${ack.id}`, { headers: AUTH });
      expect(res.status, `job ${ack.id} after the restart`).toBe(200);
      const job = (await res.json()) as { status: string; retries?: number; output?: unknown };
      if (ack.endpoint === "echo") {
        // Echo jobs finish at once: those that had not yet finished run after the restart.
        expect(job.status).toBe("COMPLETED");
        if (before.status === "COMPLETED") expect(job.output).toEqual(JSON.parse(before.output!));
      } else if (before.status === "IN_PROGRESS") {
        // Lost its worker: back in the queue (and maybe started again), counted as a retry.
        expect(["IN_QUEUE", "IN_PROGRESS"]).toContain(job.status);
        expect(job.retries).toBe(before.retries + 1);
      } else {
        expect(before.status).toBe("IN_QUEUE");
        expect(["IN_QUEUE", "IN_PROGRESS"]).toContain(job.status);
        expect(job.retries ?? 0).toBe(before.retries);
      }
    }
    const health = (await (await fetch(`${second.url}/v2/slow/health`, { headers: AUTH })).json()) as { jobs: { retried: number; inProgress: number } };
    expect(health.jobs.retried).toBe(wasRunning.filter((r) => r.endpoint_id === "slow").length);
    expect(health.jobs.inProgress).toBe(2);
  }, forStarts(2, 45_000));

  it("re-queues a job running at each stop at most 3 times: at the 4th start it fails, saying why", async () => {
    const db = join(dir, "lost.db");
    // Started at once on a warm worker, never finishing on the manual clock: running at every stop.
    const open = () => inProcess({ db, config: { endpoints: CONFIG.endpoints } });
    let e = await open();
    const id = (await e.post("/v2/slow/run", { input: { sleepMs: 3_600_000 } })).body.id as string;
    expect((await e.get(`/v2/slow/status/${id}`)).body).toMatchObject({ status: "IN_PROGRESS" });
    for (let start = 1; start <= 3; start++) {
      e.close();
      e = await open();
      expect(e.core.recovered, `start ${start}`).toBe(1);
      expect((await e.get(`/v2/slow/status/${id}`)).body, `start ${start}`).toMatchObject({ status: "IN_PROGRESS", retries: start });
    }
    e.close();
    e = await open();
    try {
      expect(e.core.recovered).toBe(1);
      const failed = (await e.get(`/v2/slow/status/${id}`)).body;
      expect(failed).toMatchObject({ status: "FAILED", retries: 3 });
      expect(failed.error).toBe("worker lost (emulator restarted); the job had already gone back to the queue 3 time(s), so it fails instead");
      const causes = (await e.get(`/_emulator/jobs/${id}/events`)).body.events.map((ev: { cause: string }) => ev.cause);
      expect(causes.filter((c: string) => c.startsWith("worker lost"))).toEqual([
        "worker lost (emulator restarted); re-queued",
        "worker lost (emulator restarted); re-queued",
        "worker lost (emulator restarted); re-queued",
        "worker lost (emulator restarted); failed after 3 retries",
      ]);
      // No worker holds it any more.
      expect((await e.get("/v2/slow/health")).body).toMatchObject({ jobs: { failed: 1, inProgress: 0 } });
    } finally {
      e.close();
    }
  });

  it("refuses a second process on the same file with a clear message, and the first keeps serving", async () => {
    const db = join(dir, "shared.db");
    const first = await startCli(["--config", cfg, "--db", db, "--clock", "manual"]);
    running.push(first);
    const err = await startCli(["--config", cfg, "--db", db, "--clock", "manual"]).then(
      (c) => {
        running.push(c);
        return "";
      },
      (e: Error) => e.message,
    );
    expect(err).toMatch(/exited with 2 before listening/);
    expect(err).toContain(`minipod: database ${db} is in use by another minipod process`);
    const res = await fetch(`${first.url}/v2/echo/run`, { method: "POST", headers: AUTH, body: JSON.stringify({ input: {} }) });
    expect(res.status).toBe(200);

    // Once the first has stopped, the file is free again.
    expect(await first.stop("SIGTERM")).toBe(0);
    const again = await startCli(["--config", cfg, "--db", db, "--clock", "manual"]);
    running.push(again);
    expect((await fetch(`${again.url}/v2/echo/health`, { headers: AUTH })).status).toBe(200);
  }, forStarts(3));

  it("holds the lock inside one process too: a second openDb on the file is refused until the first closes", () => {
    const file = join(dir, "lock.db");
    const a = openDb(file);
    expect(() => openDb(file)).toThrow(`database ${file} is in use by another minipod process`);
    a.close();
    openDb(file).close();
    expect(() => openDb(":memory:").close()).not.toThrow();
  });
});

describe("answers to writes", () => {
  const answeredAfterCommit = async (options: Parameters<typeof inProcess>[0]) => {
    const e = await inProcess(options);
    try {
      const inDb = (id: string) => e.core.db.prepare<[string], { status: string }>("SELECT status FROM jobs WHERE id = ?").get(id)?.status;
      const a = (await e.post("/v2/slow/run", { input: { sleepMs: 60_000 } })).body.id as string;
      expect(inDb(a)).toBe("IN_PROGRESS");
      const b = (await e.post("/v2/slow/run", { input: {} })).body.id as string;
      expect(inDb(b)).toBe("IN_QUEUE");
      expect((await e.post(`/v2/slow/cancel/${b}`)).status).toBe(200);
      expect(inDb(b)).toBe("CANCELLED");
      const c = (await e.post("/v2/slow/run", { input: {} })).body.id as string;
      expect(inDb(c)).toBe("IN_QUEUE");
      await e.post("/v2/slow/purge-queue");
      expect(inDb(c)).toBeUndefined();
    } finally {
      e.close();
    }
  };
  const slow = { endpoints: [{ id: "slow", handler: "scripted" as const, workersMin: 1, workersMax: 1 }] };

  it("leave only once the jobs they wrote are committed, on a file database (job writes wait for the end of the turn)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-answers-"));
    try {
      await answeredAfterCommit({ db: join(dir, "state.db"), config: slow });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("leave only once the jobs they wrote are committed, in memory with memory.heldJobRows 0", async () => {
    await answeredAfterCommit({ config: { ...slow, memory: { heldJobRows: 0 } } });
  });

  it("in memory, leave at the end of their turn with no commit while new jobs' rows wait in memory, which every reader sees", async () => {
    const e = await inProcess({ config: slow });
    try {
      const inDb = () => (e.core.db.prepare("SELECT COUNT(*) AS n FROM jobs").get() as { n: number }).n;
      const a = (await e.post("/v2/slow/run", { input: { sleepMs: 60_000 } })).body.id as string;
      const b = (await e.post("/v2/slow/run", { input: {} })).body.id as string;
      await new Promise((done) => setImmediate(done)); // the end of the turn writes nothing
      expect(inDb()).toBe(0);
      expect((await e.get(`/v2/slow/status/${a}`)).body.status).toBe("IN_PROGRESS");
      expect((await e.get(`/v2/slow/status/${b}`)).body.status).toBe("IN_QUEUE");
      // A reader with SQL (the control API's list) writes them first.
      const listed = (await e.get("/_emulator/jobs?endpoint=slow")).body as { count: number; jobs: Array<{ id: string; status: string }> };
      expect(listed.count).toBe(2);
      expect(inDb()).toBe(2);
    } finally {
      e.close();
    }
  });
});
