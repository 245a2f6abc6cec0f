import { afterEach, describe, expect, it } from "vitest";
import { FakeWall } from "../support/fake-wall.js";
import { inProcess, type InProcess } from "../support/in-process.js";

/** The dashboard shows an external endpoint's worker processes as they are. */
describe("the dashboard's worker processes", () => {
  let e: InProcess;
  afterEach(() => e.close());

  it("shows each worker process: idle, running which job, its last heartbeat, lost and why", async () => {
    const wall = new FakeWall();
    e = await inProcess({
      clock: { mode: "manual", wall, start: Date.parse("2026-01-02T03:04:05.000Z") },
      config: { endpoints: [{ id: "gpu", handler: "external" }], externalWorkers: { pingIntervalMs: 1000 } },
    });
    const empty = await e.get("/_dashboard/panels/endpoints");
    expect(empty.text).toContain("no worker process yet");

    const { id } = (await e.post("/v2/gpu/run", { input: { prompt: "hi" } })).body as { id: string };
    expect((await e.get("/v2/gpu/job-take/busy?gpu=x")).body).toMatchObject({ id });
    await e.get("/v2/gpu/ping/beating?runpod_version=1.12.0");
    await e.get("/v2/gpu/ping/gone");
    wall.advance(2000);
    await e.get("/v2/gpu/ping/busy");
    await e.get("/v2/gpu/ping/beating");
    wall.advance(1000); // "gone" has been silent for 3 s: lost

    const html = (await e.get("/_dashboard/panels/endpoints")).text;
    const item = (worker: string) => new RegExp(`<li data-worker="${worker}" data-state="([a-z]+)"[^>]*>(.*?)</li>`).exec(html);
    expect(item("busy")?.[1]).toBe("running");
    expect(item("busy")?.[2]).toContain(`data-job-id="${id}"`);
    expect(item("beating")?.[1]).toBe("idle");
    expect(item("beating")?.[2]).toContain("beat 03:04:05.000");
    expect(item("gone")?.[1]).toBe("lost");
    expect(item("gone")?.[2]).toContain("no heartbeat or request for 3 s");
    // Nothing of the simulated pool beside them: no "scaled to zero", no scaling settings.
    expect(html).not.toContain("scaled to zero");
    expect(html).not.toMatch(/cold start|workers 0–/);
    expect(html).toContain("worker processes: 2 live");

    const state = (await e.get("/_emulator/endpoints")).body as { endpoints: Array<{ id: string; externalWorkers: Array<{ id: string; state: string; jobIds: string[] }> }> };
    expect(state.endpoints[0]!.externalWorkers.map((w) => [w.id, w.state, w.jobIds])).toEqual([
      ["busy", "running", [id]],
      ["beating", "idle", []],
      ["gone", "lost", []],
    ]);
  });
});
