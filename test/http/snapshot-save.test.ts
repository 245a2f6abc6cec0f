// A snapshot save through the control API copies by turns of the event loop, and holds the state
// of the moment it began: requests made meanwhile wait for it, and none of their writes is in it.
// A save that fails leaves the snapshot of that name as it was. A reset asked of the emulator
// object while a restore or a save runs waits for it, as a request does.
import { describe, expect, it } from "vitest";
import type { Snapshots } from "../../src/compose/snapshots.js";
import { API_KEY } from "../support/in-process.js";
import { fillLargeJobs as fill } from "../support/large-jobs.js";
import { SNAPSHOT_JOBS as JOBS, snapshotEmulators } from "../support/snapshot-scene.js";

const auth = { authorization: `Bearer ${API_KEY}` };
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("a snapshot save", () => {
  const made = snapshotEmulators();

  it("takes many turns through the control API; requests made meanwhile wait for it, and their writes are not in it", async () => {
    const e = await made.inProcess(JOBS);
    let ended = false;
    const saved = e.post("/_emulator/snapshots/s", {}).then((r) => ((ended = true), r));
    const runs: Promise<{ status: number; body: { id: string } }>[] = [];
    const seen: { inQueue: number; afterEnd: boolean }[] = [];
    let turns = 0;
    for (; !ended && turns < 100_000; turns++) {
      if (e.core.snapshots.held() !== undefined) {
        runs.push(e.post("/v2/q/run", { input: { during: turns } }));
        seen.push({ inQueue: -1, afterEnd: false });
        const at = seen.length - 1;
        void e.get("/v2/q/health").then((r) => (seen[at] = { inQueue: r.body.jobs.inQueue as number, afterEnd: e.core.snapshots.held() === undefined }));
      }
      await nextTurn();
    }
    const reply = await saved;
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ name: "s", bytes: expect.any(Number) });
    expect(turns).toBeGreaterThan(2);
    expect(runs.length).toBeGreaterThan(0);
    // Made while it copied: answered after it, each job queued.
    const during = await Promise.all(runs);
    expect(during.every((r) => r.status === 200)).toBe(true);
    await nextTurn();
    expect(seen.every((s) => s.afterEnd)).toBe(true);
    expect((await e.get("/v2/q/health")).body.jobs.inQueue).toBe(JOBS + runs.length);
    // The snapshot holds the state as the save began: none of them.
    expect((await e.post("/_emulator/snapshots/s/restore", {})).status).toBe(200);
    expect((await e.get("/v2/q/health")).body.jobs.inQueue).toBe(JOBS);
    expect((await e.get(`/v2/q/status/${during[0]!.body.id}`)).status).toBe(404);
  });

  it("that fails midway leaves the snapshot of that name as it was, and lets requests and writes go on", async () => {
    const e = await made.inProcess();
    await fill(e.post, 8);
    const first = await e.post("/_emulator/snapshots/s", {});
    expect(first.status).toBe(200);
    await fill(e.post, 8);
    // A save whose copy fails after a few turns (the stopwatch it reads throws, as an allocation might).
    let readings = 0;
    const failing = () => {
      if (++readings > 30) throw new Error("out of memory");
      return performance.now();
    };
    await expect((e.core.snapshots as Snapshots).saveInSteps("s", failing)).rejects.toThrow(/out of memory/);
    expect(readings).toBeGreaterThan(30);
    expect(e.core.snapshots.held()).toBeUndefined();
    expect((await e.get("/_emulator/snapshots")).body.snapshots).toEqual([first.body]);
    await fill(e.post, 1);
    expect((await e.get("/v2/q/health")).body.jobs.inQueue).toBe(17);
    expect((await e.post("/_emulator/snapshots/s/restore", {})).status).toBe(200);
    expect((await e.get("/v2/q/health")).body.jobs.inQueue).toBe(8);
  });

  it("waits for a restore under way, and a restore asked meanwhile waits for it", async () => {
    const e = await made.inProcess();
    await fill(e.post, 8);
    expect((await e.post("/_emulator/snapshots/eight", {})).status).toBe(200);
    await fill(e.post, 8);
    const restored = e.core.snapshots.restore("eight");
    const saved = e.core.snapshots.saveInSteps("after");
    const again = e.core.snapshots.restore("after");
    await restored;
    expect((await saved).name).toBe("after");
    await again;
    expect((await e.get("/v2/q/health")).body.jobs.inQueue).toBe(8);
  });
});

describe("emulator.reset()", () => {
  const made = snapshotEmulators();

  it("asked while a restore or a save runs waits for it to end, then resets", async () => {
    const emu = await made.emulator();
    const post = async (path: string, body: unknown) => {
      const r = await emu.app.request(`http://127.0.0.1${path}`, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: JSON.stringify(body) });
      return { status: r.status };
    };
    const inQueue = async () => ((await (await emu.app.request("http://127.0.0.1/v2/q/health", { headers: auth })).json()) as { jobs: { inQueue: number } }).jobs.inQueue;
    await fill(post, JOBS);
    await emu.saveSnapshot("full");
    expect(await emu.reset()).toBeUndefined();
    expect(await inQueue()).toBe(0);

    const order: string[] = [];
    const restored = emu.restore("full").then(() => order.push("restore"));
    const reset = emu.reset().then(() => order.push("reset"));
    await Promise.all([restored, reset]);
    expect(order).toEqual(["restore", "reset"]);
    expect(await inQueue()).toBe(0);

    await emu.restore("full");
    const saved = emu.saveSnapshot("again").then(() => order.push("save"));
    const reset2 = emu.reset().then(() => order.push("reset"));
    await Promise.all([saved, reset2]);
    expect(order.slice(2)).toEqual(["save", "reset"]);
    expect(await inQueue()).toBe(0);
    await emu.restore("again");
    expect(await inQueue()).toBe(JOBS);
  });

  it("asked first, holds a restore or a save asked while it runs (over HTTP or of the object) until it has ended", async () => {
    const emu = await made.emulator();
    const post = async (path: string, body?: unknown) => {
      const r = await emu.app.request(`http://127.0.0.1${path}`, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: JSON.stringify(body ?? {}) });
      return { status: r.status };
    };
    const inQueue = async () => ((await (await emu.app.request("http://127.0.0.1/v2/q/health", { headers: auth })).json()) as { jobs: { inQueue: number } }).jobs.inQueue;
    await fill(post, JOBS);
    await emu.saveSnapshot("full");

    const order: string[] = [];
    const reset = post("/_emulator/reset").then((r) => order.push(`reset ${r.status}`));
    const restored = post("/_emulator/snapshots/full/restore").then((r) => order.push(`restore ${r.status}`));
    await Promise.all([reset, restored]);
    expect(order).toEqual(["reset 200", "restore 200"]);
    expect(await inQueue()).toBe(JOBS);

    const reset2 = emu.reset().then(() => order.push("reset"));
    const saved = emu.saveSnapshot("after").then(() => order.push("save"));
    const restored2 = emu.restore("full").then(() => order.push("restore"));
    await Promise.all([reset2, saved, restored2]);
    expect(order.slice(2)).toEqual(["reset", "save", "restore"]);
    expect(await inQueue()).toBe(JOBS);
    // The save held the state the reset left.
    await emu.restore("after");
    expect(await inQueue()).toBe(0);
  });
});
