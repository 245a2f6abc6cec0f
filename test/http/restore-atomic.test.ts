// A snapshot restore takes many turns of the event loop, and no request sees part of the old
// state and part of the new: every request made while it copies waits for it to end, in process
// and on minipod's socket (plain requests and upgrades alike). A state file that cannot be
// imported is refused, naming why, with the database left as it was.
import { connect } from "node:net";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess } from "../support/in-process.js";
import { fillLargeJobs as fill } from "../support/large-jobs.js";
import { SNAPSHOT_CONFIG as config, SNAPSHOT_JOBS as JOBS, snapshotEmulators } from "../support/snapshot-scene.js";

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const auth = { authorization: "Bearer k" };

describe("a snapshot restore", () => {
  const made = snapshotEmulators();

  it("takes many turns, and every request made meanwhile waits for it and sees the state restored", async () => {
    const e = await made.inProcess(JOBS);
    expect((await e.post("/_emulator/snapshots/before", {})).status).toBe(200);
    // The state after the snapshot: twice as many jobs.
    await fill(e.post, JOBS);

    let ended = false;
    const restored = e.post("/_emulator/snapshots/before/restore", {}).then((r) => ((ended = true), r));
    const seen: { during: boolean; inQueue: number; afterEnd: boolean }[] = [];
    let turns = 0;
    // A health request every turn: each sees the state before (answered before the restore
    // began) or the state restored (made while it copies: answered once it has ended), never a mix.
    const health: Promise<void>[] = [];
    for (; !ended && turns < 100_000; turns++) {
      {
        const during = e.core.snapshots.held() !== undefined;
        health.push(e.get("/v2/q/health").then((r) => void seen.push({ during, inQueue: r.body.jobs.inQueue, afterEnd: e.core.snapshots.held() === undefined })));
      }
      await nextTurn();
    }
    expect((await restored).status).toBe(200);
    await Promise.all(health);
    expect(turns).toBeGreaterThan(2);
    expect(seen.every((s) => s.inQueue === JOBS || s.inQueue === 2 * JOBS)).toBe(true);
    const during = seen.filter((s) => s.during);
    expect(during.length).toBeGreaterThan(0);
    expect(during.every((s) => s.inQueue === JOBS && s.afterEnd)).toBe(true);
  });

  it("on a --db file, swaps the state in whole over many turns, and a restart finds it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "restore-db-"));
    try {
      const db = join(dir, "state.db");
      let e = await made.inProcess(JOBS, { db });
      expect((await e.post("/_emulator/snapshots/before", {})).status).toBe(200);
      await fill(e.post, JOBS);
      let ended = false;
      const restored = e.post("/_emulator/snapshots/before/restore", {}).then((r) => ((ended = true), r));
      const seen: number[] = [];
      const health: Promise<void>[] = [];
      let turns = 0;
      for (; !ended && turns < 100_000; turns++) {
        health.push(e.get("/v2/q/health").then((r) => void seen.push(r.body.jobs.inQueue as number)));
        await nextTurn();
      }
      expect((await restored).status).toBe(200);
      await Promise.all(health);
      expect(turns).toBeGreaterThan(2);
      expect(seen.every((n) => n === JOBS || n === 2 * JOBS)).toBe(true);
      expect(seen.at(-1)).toBe(JOBS);
      e.close();
      e = await made.inProcess(0, { db });
      expect((await e.get("/v2/q/health")).body.jobs.inQueue).toBe(JOBS);
      e.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("waits for a restore under way before another, and refuses a save meanwhile, and the deletion of the snapshot it reads", async () => {
    const e = await made.inProcess(8);
    expect((await e.post("/_emulator/snapshots/eight", {})).status).toBe(200);
    await fill(e.post, 8);
    expect((await e.post("/_emulator/snapshots/sixteen", {})).status).toBe(200);
    const first = e.core.snapshots.restore("eight");
    expect(() => e.core.snapshots.save("during")).toThrow(/being restored/);
    expect(() => e.core.snapshots.delete("eight")).toThrow(/it is being restored/);
    const second = e.core.snapshots.restore("sixteen");
    await first;
    await second;
    expect((await e.get("/v2/q/health")).body.jobs.inQueue).toBe(16);
  });

  it("waits for the copy of an export under way, which holds the state before it whole", async () => {
    const tmp = process.env.TMPDIR;
    const dir = mkdtempSync(join(tmpdir(), "restore-export-"));
    process.env.TMPDIR = dir;
    try {
      const e = await made.inProcess(JOBS / 2);
      expect((await e.post("/_emulator/snapshots/before", {})).status).toBe(200);
      await fill(e.post, JOBS / 2);
      const exported = Promise.resolve(e.app.request("http://minipod.test/_emulator/export")).then(async (r) => Buffer.from(await r.arrayBuffer()));
      // Once its copy has begun (its file exists), a restore.
      const copying = () => readdirSync(dir).some((d) => existsSync(join(dir, d, "state.db")));
      for (let i = 0; i < 100_000 && !copying(); i++) await nextTurn();
      expect(copying()).toBe(true);
      const restored = e.core.snapshots.restore("before");
      const file = join(dir, "exported.db");
      writeFileSync(file, await exported);
      await restored;
      expect((await e.get("/v2/q/health")).body.jobs.inQueue).toBe(JOBS / 2);
      const imported = await inProcess({ config, importFile: file });
      try {
        expect((await imported.get("/v2/q/health")).body.jobs.inQueue).toBe(JOBS);
      } finally {
        imported.close();
      }
    } finally {
      if (tmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmp;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("on minipod's socket, holds requests and WebSocket upgrades until it ends", async () => {
    const emu = await made.emulator({ port: 0 });
    const post = async (path: string, body: unknown) => fetch(`${emu.url}${path}`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(body) });
    await fill(post, JOBS);
    expect((await post("/_emulator/snapshots/before", {})).status).toBe(200);
    await fill(post, JOBS);
    let ended = false;
    // Begun at once (the emulator's own restore): the requests below come while it copies.
    const restored = emu.restore("before").then((r) => ((ended = true), r));
    const health = fetch(`${emu.url}/v2/q/health`, { headers: auth }).then(async (r) => ({ ended, body: (await r.json()) as { jobs: { inQueue: number } } }));
    // An upgrade to WebSocket outside a load-balancing endpoint: held, then served as the plain request it also is.
    const upgraded = new Promise<{ ended: boolean; head: string }>((resolve, reject) => {
      const socket = connect(Number(new URL(emu.url).port), "127.0.0.1");
      let text = "";
      socket.on("data", (d) => {
        text += d.toString("latin1");
        if (text.includes("\r\n\r\n")) {
          resolve({ ended, head: text.split("\r\n")[0]! });
          socket.destroy();
        }
      });
      socket.on("error", reject);
      socket.write(`GET /v2/q/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    expect((await restored).name).toBe("before");
    const h = await health;
    expect(h.ended).toBe(true);
    expect(h.body.jobs.inQueue).toBe(JOBS);
    const u = await upgraded;
    expect(u.ended).toBe(true);
    expect(u.head).toBe("HTTP/1.1 200 OK");
  });
});

describe("--import of a state file", () => {
  let dir: string;
  let tmp: string | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "import-test-"));
    tmp = process.env.TMPDIR;
  });
  afterEach(() => {
    if (tmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmp;
    rmSync(dir, { recursive: true, force: true });
  });
  // Registered last, its emulators are closed first (after hooks run in reverse).
  const made = snapshotEmulators();
  const open = (options: Parameters<typeof inProcess>[0]) => made.inProcess(0, options);

  /** A state file of `n` queued jobs, exported. */
  async function exported(n: number): Promise<string> {
    const source = await open({});
    await fill(source.post, n);
    const res = await source.app.request("http://minipod.test/_emulator/export");
    const file = join(dir, `exported-${n}.db`);
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    return file;
  }

  it("refuses what is no minipod state, naming why, and leaves a --db file as it was", async () => {
    const db = join(dir, "state.db");
    const kept = await open({ db });
    await fill(kept.post, 3);
    kept.close();
    const garbage = join(dir, "garbage.db");
    writeFileSync(garbage, "this is not a database at all, only some text long enough to have a header".repeat(100));
    await expect(inProcess({ config, db, importFile: garbage })).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringMatching(/not a minipod state file/) });
    // Another program's SQLite database.
    const other = join(dir, "other.db");
    const { openSqlite } = await import("../../src/store/sqlite.js");
    const foreign = openSqlite(other);
    foreign.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('hello')");
    foreign.close();
    await expect(inProcess({ config, db, importFile: other })).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringMatching(/not one minipod wrote/) });
    // A state file cut short: found out while it is copied, and rolled back.
    const cut = await exported(JOBS);
    truncateSync(cut, Math.floor(readFileSync(cut).length / 2));
    await expect(inProcess({ config, db, importFile: cut })).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringMatching(/not a minipod state file/) });
    const after = await open({ db });
    expect((await after.get("/v2/q/health")).body.jobs.inQueue).toBe(3);
  });

  it("refuses a state larger than the in-memory database's bound with 413", async () => {
    const file = await exported(JOBS);
    await expect(inProcess({ config: { ...config, memory: { databaseBytes: 16 * 1024 * 1024 } }, importFile: file })).rejects.toMatchObject({
      code: "PAYLOAD_TOO_LARGE",
      message: expect.stringMatching(/memory\.databaseBytes/),
    });
  });

  it("with TMPDIR unwritable, says which folder", async () => {
    const file = await exported(2);
    process.env.TMPDIR = join(dir, "missing", "tmp");
    await expect(inProcess({ config, importFile: file })).rejects.toMatchObject({ code: "STORAGE_FULL", message: expect.stringContaining(join(dir, "missing", "tmp")) });
    mkdirSync(process.env.TMPDIR, { recursive: true });
    const ok = await open({ importFile: file });
    expect((await ok.get("/v2/q/health")).body.jobs.inQueue).toBe(2);
  });
});
