import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildEmulator } from "../../src/compose/emulator.js";

let dir: string | undefined;
let close: (() => unknown) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const body = (bytes: number) => JSON.stringify({ input: { image: "A".repeat(bytes) } });

describe("a full disk", () => {
  it("answers 507 saying the disk is full, keeps what it acknowledged, logs once, and recovers when space returns", async () => {
    dir = mkdtempSync(join(tmpdir(), "minipod-full-"));
    const lines: string[] = [];
    const { core, app } = await buildEmulator({
      clock: "manual",
      db: join(dir, "state.db"),
      logLevel: "error",
      log: (line: string) => lines.push(line),
      config: { endpoints: [{ id: "img", handler: "echo", workersMin: 0, workersMax: 0 }] },
    });
    close = () => core.close();
    const run = (bytes: number) => app.request("http://minipod.test/v2/img/run", { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer test-key" }, body: body(bytes) });
    const first = await run(10);
    expect(first.status).toBe(200);
    const kept = ((await first.json()) as { id: string }).id;

    // SQLite's page limit makes every write that needs a new page fail as a full disk does (SQLITE_FULL).
    const pages = core.db.pragma("page_count", { simple: true }) as number;
    core.db.pragma(`max_page_count = ${pages}`);
    for (let i = 0; i < 3; i++) {
      const full = await run(200_000);
      expect(full.status).toBe(507);
      expect(full.headers.get("retry-after")).toBe("5");
      const problem = (await full.json()) as { title: string; detail: string };
      expect(problem.title).toBe("Insufficient Storage");
      expect(problem.detail).toMatch(/the disk is full.*nothing of this request was kept.*free space/);
    }
    const diskLines = lines.filter((l) => /the disk is full/.test(l));
    expect(diskLines).toHaveLength(1);
    expect(lines.some((l) => /Internal Server Error|at .*\.ts:\d+/.test(l))).toBe(false);

    // Space returns: writes go on, and the job acknowledged before is still there.
    core.db.pragma("max_page_count = 1073741823");
    const after = await run(200_000);
    expect(after.status).toBe(200);
    const status = await app.request(`http://minipod.test/v2/img/status/${kept}`, { headers: { authorization: "Bearer test-key" } });
    expect(((await status.json()) as { status: string }).status).toBe("IN_QUEUE");
    // The refused ones are nowhere: neither listed nor queued (the health counts read the queue).
    const listed = (await (await app.request("http://minipod.test/_emulator/jobs?endpoint=img")).json()) as { count: number };
    expect(listed.count).toBe(2);
    const health = (await (await app.request("http://minipod.test/v2/img/health", { headers: { authorization: "Bearer test-key" } })).json()) as { jobs: { inQueue: number } };
    expect(health.jobs.inQueue).toBe(2);
  });
});
