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
    const run = (bytes: number) =>
      app.request("http://minipod.test/v2/img/run", { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer test-key" }, body: body(bytes) });
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

describe("the in-memory database's bound (memory.databaseBytes)", () => {
  it("answers 507 past it, as a full disk, and takes writes again once rows are deleted", async () => {
    const { core, app } = await buildEmulator({
      clock: "manual",
      logLevel: "silent",
      config: { memory: { databaseBytes: 16 * 1024 * 1024 }, journal: { maxEntries: 0 }, endpoints: [{ id: "img", handler: "echo", workersMin: 0, workersMax: 0 }] },
    });
    close = () => core.close();
    const run = (bytes: number) =>
      app.request("http://minipod.test/v2/img/run", { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer test-key" }, body: body(bytes) });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await run(2 * 1024 * 1024)).status);
    // 16 MiB hold seven jobs of 2 MB at most; the rest are refused, none acknowledged and lost.
    const accepted = statuses.filter((s) => s === 200).length;
    expect(accepted).toBeGreaterThan(3);
    expect(accepted).toBeLessThan(8);
    expect(statuses.slice(accepted).every((s) => s === 507)).toBe(true);
    const full = await run(2 * 1024 * 1024);
    expect(((await full.json()) as { detail: string }).detail).toMatch(/in-memory database reached memory.databaseBytes/);
    const listed = (await (await app.request("http://minipod.test/_emulator/jobs?endpoint=img")).json()) as { count: number };
    expect(listed.count).toBe(accepted);
    // The queue emptied, the pages are reused: new jobs are taken again.
    expect((await app.request("http://minipod.test/v2/img/purge-queue", { method: "POST", headers: { authorization: "Bearer test-key" } })).status).toBe(200);
    expect((await run(2 * 1024 * 1024)).status).toBe(200);
  });
});

describe("a full database through GraphQL", () => {
  const mutation = (readmeBytes: number, name: string) =>
    JSON.stringify({ query: `mutation ($readme: String) { saveTemplate(input: { name: "${name}", imageName: "me/x:1", readme: $readme }) { id } }`, variables: { readme: "R".repeat(readmeBytes) } });

  it("answers a mutation 507 with Retry-After, as REST does, and logs one line naming the --db file, no stack", async () => {
    dir = mkdtempSync(join(tmpdir(), "minipod-full-"));
    const lines: string[] = [];
    const file = join(dir, "state.db");
    const { core, app } = await buildEmulator({ clock: "manual", db: file, logLevel: "error", log: (line: string) => lines.push(line) });
    close = () => core.close();
    const gql = (body: string) => app.request("http://minipod.test/graphql", { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer test-key" }, body });
    expect((await gql(mutation(10, "before"))).status).toBe(200);

    core.db.pragma(`max_page_count = ${core.db.pragma("page_count", { simple: true }) as number}`);
    for (let i = 0; i < 3; i++) {
      const full = await gql(mutation(200_000, `full-${i}`));
      expect(full.status).toBe(507);
      expect(full.headers.get("retry-after")).toBe("5");
      const problem = (await full.json()) as { title: string; detail: string };
      expect(problem.title).toBe("Insufficient Storage");
      expect(problem.detail).toMatch(/the disk is full.*nothing of this request was kept/);
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("the disk is full: writes fail and are answered 507 (first: POST /graphql)");
    expect(lines[0]).toContain(`free space on the disk that holds ${file}`);
    expect(lines.join("\n")).not.toMatch(/internal error|at .*\.[jt]s:\d+/);

    core.db.pragma("max_page_count = 1073741823");
    const after = (await (await gql(mutation(200_000, "after"))).json()) as { data: { saveTemplate: { id: string } } };
    expect(after.data.saveTemplate.id).toBeTruthy();
    const names = ((await (await app.request("http://minipod.test/v1/templates", { headers: { authorization: "Bearer test-key" } })).json()) as Array<{ name: string }>).map((t) => t.name);
    expect(names.sort()).toEqual(["after", "before"]);
  });

  it("without --db, the log line speaks of the in-memory database's memory.databaseBytes", async () => {
    const lines: string[] = [];
    const { core, app } = await buildEmulator({
      clock: "manual",
      logLevel: "error",
      log: (line: string) => lines.push(line),
      config: { memory: { databaseBytes: 16 * 1024 * 1024 }, journal: { maxEntries: 0 } },
    });
    close = () => core.close();
    const gql = (body: string) => app.request("http://minipod.test/graphql", { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer test-key" }, body });
    const statuses: number[] = [];
    for (let i = 0; i < 30 && !statuses.includes(507); i++) statuses.push((await gql(mutation(900_000, `t${i}`))).status);
    expect(statuses).toContain(507);
    expect(statuses.filter((s) => s !== 200 && s !== 507)).toEqual([]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("the in-memory database is full (memory.databaseBytes, 16 MiB): writes fail and are answered 507 (first: POST /graphql)");
    expect(lines[0]).not.toContain("disk");
  });
});
