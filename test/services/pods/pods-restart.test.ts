import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../../src/index.js";

const H = 3_600_000;
const T0 = Date.parse("2024-07-15T00:00:00Z");
const config = {
  endpoints: [{ id: "warm", workersMin: 1, workersMax: 1, gpuTypeIds: ["NVIDIA A40" as const] }],
  pricing: { gpuPerHour: { "NVIDIA A40": 3.6, "NVIDIA GeForce RTX 4090": 1.8 } },
};

describe("pods, registry auths and billing on a file database", () => {
  let dir: string;
  let emu: Emulator | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "minipod-pods-"));
  });
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const open = async (at: number) => {
    emu = await createEmulator({ db: join(dir, "state.db"), clock: { mode: "manual", start: at }, config });
    return emu;
  };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${emu!.url}${path}`, {
      method,
      headers: { authorization: "Bearer test-key", "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  it("keeps pods, their state, registry auths and usage across a restart", async () => {
    await open(T0);
    const auth = (await call("POST", "/v1/containerregistryauth", { name: "creds", username: "me", password: "pw" })).body;
    const running = (await call("POST", "/v1/pods", { name: "running", imageName: "img", containerRegistryAuthId: auth.id })).body;
    const stopped = (await call("POST", "/v1/pods", { name: "stopped", imageName: "img" })).body;
    await emu!.clock.advance(H);
    expect((await call("POST", `/v1/pods/${stopped.id}/stop`)).body.desiredStatus).toBe("EXITED");
    await emu!.close();

    // Back one hour later (virtual): the pods are as they were; the running pod billed throughout.
    await open(T0 + 2 * H);
    const pods = (await call("GET", "/v1/pods")).body;
    expect(pods.map((p: { id: string; desiredStatus: string }) => [p.id, p.desiredStatus])).toEqual([
      [running.id, "RUNNING"],
      [stopped.id, "EXITED"],
    ]);
    expect((await call("GET", `/v1/pods/${running.id}`)).body).toEqual(running);
    expect((await call("GET", "/v1/containerregistryauth")).body).toEqual([{ id: auth.id, name: "creds" }]);
    expect((await call("DELETE", `/v1/containerregistryauth/${auth.id}`)).status).toBe(400);

    const billed = (await call("GET", "/v1/billing/pods?grouping=podId")).body;
    expect(billed).toHaveLength(2);
    expect(billed).toEqual(
      expect.arrayContaining([
        { time: "2024-07-15T00:00:00.000Z", podId: running.id, amount: 3.6, timeBilledMs: 2 * H },
        { time: "2024-07-15T00:00:00.000Z", podId: stopped.id, amount: 1.8, timeBilledMs: H },
      ]),
    );
    // The first run's worker billed its hour, until the emulator closed; this run's worker bills from its start.
    await emu!.clock.advance(1000);
    const workers = (await call("GET", "/v1/billing/endpoints?grouping=podId")).body.map((r: { timeBilledMs: number }) => r.timeBilledMs);
    expect(workers.sort((a: number, b: number) => a - b)).toEqual([1000, H]);
  });

  it("bills a worker left open by an unclean stop until it was last seen", async () => {
    await open(T0);
    await call("POST", "/v2/warm/run", { input: {} });
    await emu!.clock.advance(10 * 60_000);
    await call("POST", "/v2/warm/run", { input: {} });
    await emu!.clock.advance(20 * 60_000);
    await emu!.close();
    emu = undefined;
    // What a crash leaves: the worker's interval still open; its last state change (the second
    // job, at 10 min) is the last moment known, not the close at 30 min.
    const db = new Database(join(dir, "state.db"));
    const changed = db.prepare(`UPDATE usage_intervals SET stopped_at = NULL WHERE kind = 'worker'`).run().changes;
    db.close();
    expect(changed).toBe(1);

    await open(T0 + 5 * H);
    const records = (await call("GET", "/v1/billing/endpoints?bucketSize=hour&grouping=podId")).body;
    expect(records[0]).toMatchObject({ time: "2024-07-15T00:00:00.000Z", timeBilledMs: 10 * 60_000, amount: 0.6 });
  });
});
