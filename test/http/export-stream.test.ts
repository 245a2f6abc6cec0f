import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

const SECRET = "s3-secret-Vb71Qe";
const TOKEN = "hook-token-Xk20Lm";
const JOBS = 40;
const config = { endpoints: [{ id: "q", handler: "echo", workersMin: 0, workersMax: 0 }] };
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Queues JOBS jobs of about 250 KB each (10 MB in all: more than one step of the copy), each with secrets. */
async function fill(e: InProcess): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < JOBS; i++) {
    const res = await e.post("/v2/q/run", {
      input: { i, pad: `${i}-`.repeat(80_000) },
      webhook: `https://receiver.test/hook?token=${TOKEN}`,
      s3Config: { accessId: "AKIAEXAMPLE", accessSecret: SECRET, bucketName: "b", endpointUrl: "https://s3.example.test", objectPath: "p/" },
    });
    expect(res.status).toBe(200);
    ids.push(res.body.id);
  }
  return ids;
}

describe("GET /_emulator/export of a database larger than one step", () => {
  let e: InProcess | undefined;
  let imported: InProcess | undefined;
  let dir: string;
  let tmp: string | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "export-test-"));
    // The export's temporary file goes under TMPDIR: here, so that the test sees it go.
    tmp = process.env.TMPDIR;
    process.env.TMPDIR = join(dir, "tmp");
    mkdirSync(process.env.TMPDIR);
  });
  afterEach(() => {
    e?.close();
    imported?.close();
    e = imported = undefined;
    if (tmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmp;
    rmSync(dir, { recursive: true, force: true });
  });

  /** Waits (a bounded number of turns) for the export's temporary directory to be removed. */
  async function temporaryFilesGone(): Promise<string[]> {
    for (let i = 0; i < 10_000 && readdirSync(join(dir, "tmp")).length > 0; i++) await nextTurn();
    return readdirSync(join(dir, "tmp"));
  }

  for (const where of ["in memory", "in a --db file"]) {
    it(`${where}: holds no secret anywhere in its bytes, imports whole, and leaves no file behind`, async () => {
      e = await inProcess({ config, ...(where === "in memory" ? {} : { db: join(dir, "state.db") }) });
      const ids = await fill(e);
      const res = await e.app.request("http://minipod.test/_emulator/export");
      expect(res.status).toBe(200);
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(Number(res.headers.get("content-length"))).toBe(bytes.length);
      expect(bytes.length).toBeGreaterThan(JOBS * 160_000);
      const text = bytes.toString("latin1");
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(TOKEN);
      // A rollback-journal database file, whatever the live one's mode.
      expect([bytes[18], bytes[19]]).toEqual([1, 1]);
      expect(await temporaryFilesGone()).toEqual([]);

      const file = join(dir, "exported.db");
      writeFileSync(file, bytes);
      imported = await inProcess({ config, importFile: file });
      for (const id of ids) {
        const status = await imported.get(`/v2/q/status/${id}`);
        expect(status.body.status, id).toBe("IN_QUEUE");
      }
      const journal = JSON.stringify((await imported.get("/_emulator/requests?endpoint=q")).body);
      expect(journal).not.toContain(TOKEN);
    });
  }

  it("answers requests made while it copies before it ends", async () => {
    e = await inProcess({ config });
    await fill(e);
    let ended = false;
    const exported = Promise.resolve(e.app.request("http://minipod.test/_emulator/export")).then(async (r) => {
      const bytes = Buffer.from(await r.arrayBuffer());
      ended = true;
      return bytes;
    });
    await nextTurn();
    const health = await e.get("/v2/q/health");
    expect(health.status).toBe(200);
    expect(health.body.jobs.inQueue).toBe(JOBS);
    expect(ended).toBe(false);
    const run = await e.post("/v2/q/run", { input: { during: true } });
    expect(run.status).toBe(200);
    expect(ended).toBe(false);
    expect((await exported).toString("latin1")).not.toContain(SECRET);
  });

  it("in memory, ends however steadily jobs are written while it copies, and holds them", async () => {
    e = await inProcess({ config: { ...config, rateLimits: { enabled: false } } });
    const ids = await fill(e);
    let ended = false;
    const exported = Promise.resolve(e.app.request("http://minipod.test/_emulator/export")).then(async (r) => {
      const bytes = Buffer.from(await r.arrayBuffer());
      ended = true;
      return bytes;
    });
    // A job submitted every turn (each starts an in-memory copy over), for at most 2,000 turns.
    for (let i = 0; i < 2000 && !ended; i++) {
      const res = await e.post("/v2/q/run", { input: { during: i } });
      expect(res.status).toBe(200);
      await nextTurn();
    }
    expect(ended).toBe(true);
    const file = join(dir, "exported.db");
    writeFileSync(file, await exported);
    imported = await inProcess({ config, importFile: file });
    // Those queued before it began are in it (later ones, if the copy had ended, are not).
    for (const id of ids.slice(0, JOBS)) expect((await imported.get(`/v2/q/status/${id}`)).body.status, id).toBe("IN_QUEUE");
  });

  it("answers 507 naming the folder when TMPDIR cannot be written (the operator's setting)", async () => {
    e = await inProcess({ config });
    for (const folder of [join(dir, "missing"), join(dir, "a-file")]) {
      writeFileSync(join(dir, "a-file"), "not a folder");
      process.env.TMPDIR = folder;
      const res = await e.get("/_emulator/export");
      expect(res.status).toBe(507);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.body.detail).toContain(`cannot make a temporary directory in ${folder} (TMPDIR)`);
    }
  });

  it("removes its temporary file when the client stops reading", async () => {
    e = await inProcess({ config });
    await fill(e);
    const res = await e.app.request("http://minipod.test/_emulator/export");
    const reader = res.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
    expect(await temporaryFilesGone()).toEqual([]);
  });
});
