import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDb } from "../../src/store/db.js";
import { startCli, type RunningCli } from "../support/cli.js";

const AUTH = { authorization: "Bearer test-key", "content-type": "application/json" };
const CONFIG = {
  logLevel: "info",
  rateLimits: { enabled: false },
  endpoints: [
    { id: "echo", handler: "echo", workersMin: 1, coldStartMs: 0 },
    { id: "slow", handler: "scripted", workersMin: 1, workersMax: 1, coldStartMs: 0 },
  ],
};

describe("graceful stop", () => {
  let dir: string;
  let cfg: string;
  let cli: RunningCli | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "minipod-stop-"));
    cfg = join(dir, "config.json");
    writeFileSync(cfg, JSON.stringify(CONFIG));
  });
  afterEach(async () => {
    await cli?.stop("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`on ${signal}: answers the requests in flight, stops accepting, closes the database and exits 0`, async () => {
      const db = join(dir, "state.db");
      cli = await startCli(["--config", cfg, "--db", db, "--clock", "manual"]);
      const url = cli.url;
      const done = await fetch(`${url}/v2/echo/run`, { method: "POST", headers: AUTH, body: JSON.stringify({ input: { kept: true } }) }).then((r) => r.json() as Promise<{ id: string }>);

      // Held on the manual clock: it would wait 300 s of virtual time that never passes.
      const held = fetch(`${url}/v2/slow/runsync?wait=300000`, { method: "POST", headers: AUTH, body: JSON.stringify({ input: { sleepMs: 3_600_000 } }) });
      for (let i = 0; i < 200; i++) {
        const h = (await (await fetch(`${url}/v2/slow/health`, { headers: AUTH })).json()) as { jobs: { inProgress: number } };
        if (h.jobs.inProgress === 1) break;
        await new Promise((r) => setTimeout(r, 10));
      }

      const t0 = Date.now();
      cli.proc.kill(signal);
      const answer = await held;
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ id: expect.stringMatching(/^sync-/), status: "IN_PROGRESS" });

      const proc = cli.proc;
      const code = proc.exitCode ?? proc.signalCode ?? (await new Promise((resolve) => proc.once("exit", (c, sig) => resolve(c ?? sig))));
      expect(code).toBe(0);
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(cli.stderr()).toContain(`${signal}: stopping minipod`);
      await expect(fetch(`${url}/v2/echo/health`, { headers: AUTH })).rejects.toThrow();

      // Closed cleanly: the WAL was folded back into the file, the lock is free, the job is there.
      expect(existsSync(`${db}-wal`)).toBe(false);
      const reopened = openDb(db);
      try {
        expect(reopened.prepare("SELECT status FROM jobs WHERE id = ?").get(done.id)).toEqual({ status: "COMPLETED" });
      } finally {
        reopened.close();
      }
    });
  }
});
