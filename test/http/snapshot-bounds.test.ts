import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/compose/emulator.js";
import { inProcess, type InProcess } from "../support/in-process.js";

let e: InProcess;
afterEach(() => e?.close());

const start = (snapshots?: Record<string, number>) =>
  inProcess({ config: { endpoints: [{ id: "ep", handler: "echo", workersMin: 1, coldStartMs: 0 }], ...(snapshots ? { snapshots } : {}) } }).then((x) => (e = x));

describe("snapshot bounds", () => {
  it("refuses a snapshot past snapshots.maxCount with 409 saying how to free one, and DELETE frees it", async () => {
    await start({ maxCount: 2 });
    expect((await e.post("/_emulator/snapshots/a")).status).toBe(200);
    expect((await e.post("/_emulator/snapshots/b")).status).toBe(200);
    const third = await e.post("/_emulator/snapshots/c");
    expect(third.status).toBe(409);
    expect(third.headers.get("content-type")).toContain("application/problem+json");
    expect(third.body).toMatchObject({ title: "Conflict", status: 409 });
    expect(third.body.detail).toBe(
      'snapshot "c" not saved: 2 snapshots are held, the most snapshots.maxCount allows (2); delete one with DELETE /_emulator/snapshots/{name} (held: a, b), save under one of their names, or raise snapshots.maxCount in the config',
    );
    // Nothing held changed, and saving again under a held name replaces it.
    expect((await e.get("/_emulator/snapshots")).body.snapshots.map((s: { name: string }) => s.name)).toEqual(["a", "b"]);
    expect((await e.post("/_emulator/snapshots/b")).status).toBe(200);

    expect((await e.request("DELETE", "/_emulator/snapshots/a")).body).toEqual({ removed: 1 });
    expect((await e.request("DELETE", "/_emulator/snapshots/a")).status).toBe(404);
    expect((await e.post("/_emulator/snapshots/c")).status).toBe(200);
    expect((await e.post("/_emulator/snapshots/a/restore")).status).toBe(404);
    expect((await e.post("/_emulator/snapshots/c/restore")).status).toBe(200);
  });

  it("refuses a snapshot past snapshots.maxBytes, counting what it would replace as freed", async () => {
    await start();
    const one = (await e.post("/_emulator/snapshots/probe")).body.bytes as number;
    e.close();
    await start({ maxBytes: Math.floor(one * 2.5) });
    expect((await e.post("/_emulator/snapshots/a")).status).toBe(200);
    expect((await e.post("/_emulator/snapshots/b")).status).toBe(200);
    const third = await e.post("/_emulator/snapshots/c");
    expect(third.status).toBe(409);
    expect(third.body.detail).toMatch(
      /^snapshot "c" not saved: it takes [\d.]+ MB and the other snapshots [\d.]+ MB, over snapshots\.maxBytes \([\d.]+ MB\); delete one with DELETE \/_emulator\/snapshots\/\{name\} \(held: a, b\), or raise snapshots\.maxBytes in the config$/,
    );
    expect((await e.post("/_emulator/snapshots/b")).status).toBe(200);
    const listed = (await e.get("/_emulator/snapshots")).body;
    expect(listed).toMatchObject({ maxCount: 20, maxBytes: Math.floor(one * 2.5), totalBytes: listed.snapshots[0].bytes + listed.snapshots[1].bytes });
  });

  it("holds 20 snapshots and 512 MiB by default, and both bounds are configurable", async () => {
    await start();
    expect((await e.get("/_emulator/snapshots")).body).toEqual({ snapshots: [], totalBytes: 0, maxCount: 20, maxBytes: 512 * 1024 * 1024 });
    for (let i = 0; i < 20; i++) expect((await e.post(`/_emulator/snapshots/s${i}`)).status).toBe(200);
    expect((await e.post("/_emulator/snapshots/s20")).status).toBe(409);
    await expect(inProcess({ config: { snapshots: { maxCount: 0 } } })).rejects.toThrow(/snapshots\.maxCount: /);
  });

  it("are the same for createEmulator's snapshot(), which can delete too", async () => {
    const emu: Emulator = await createEmulator({ config: { snapshots: { maxCount: 1 } } });
    try {
      emu.snapshot("one");
      expect(() => emu.snapshot("two")).toThrow(/snapshots\.maxCount allows \(1\)/);
      expect(emu.deleteSnapshot("one")).toBe(true);
      expect(emu.deleteSnapshot("one")).toBe(false);
      expect(emu.snapshot("two").name).toBe("two");
    } finally {
      await emu.close();
    }
  });
});
