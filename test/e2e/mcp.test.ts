import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli, type RunningCli } from "../support/cli.js";
import { callTool, connectMcp } from "../support/mcp.js";

const KEY = "mcp-e2e-key";
const QUEUE_ONLY_KEY = "mcp-queue-only";

const dir = mkdtempSync(join(tmpdir(), "minipod-mcp-"));
const configFile = join(dir, "emulator.config.json");
writeFileSync(
  configFile,
  JSON.stringify({
    // 30 s before a minute boundary, so a spent minute window resets in exactly 30 s.
    clock: { mode: "manual", start: "2026-03-04T05:29:30Z" },
    endpoints: [{ id: "echo", handler: "echo", workersMin: 1, workersMax: 1 }],
    networkVolumes: [
      { id: "vol-train", name: "training-dataset", size: 100, dataCenter: "US-KS-2", type: "HIGH_PERFORMANCE" },
      { id: "vol-cache", name: "model-cache", size: 50, dataCenter: "EU-RO-1" },
    ],
    auth: { keys: [{ key: KEY }, { key: QUEUE_ONLY_KEY, scopes: ["queue:read", "queue:write"] }] },
    rateLimits: { rest: { minute: 3 } },
  }),
);

const connect = (url: string, key: string) => connectMcp(url, key, dir);
const call = callTool;

describe("the real CLI driven by the service's MCP server", () => {
  let cli: RunningCli;
  let mcp: Awaited<ReturnType<typeof connect>>;
  beforeAll(async () => {
    cli = await startCli(["--config", configFile]);
    mcp = await connect(cli.url, KEY);
  });
  afterAll(async () => {
    await mcp?.client.close();
    expect(await cli?.stop("SIGINT")).toBe(0);
  });

  it("offers the tools the tests use", async () => {
    const { tools } = await mcp.client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ["list-network-volumes", "run-endpoint", "get-job-status"]) expect(names).toContain(name);
  });

  it("lists the configured network volumes through GET /v2/network-volumes", async () => {
    const res = await call(mcp.client, "list-network-volumes");
    expect(res.isError, JSON.stringify(res.payload)).toBe(false);
    const volumes = (res.payload.networkVolumes as Array<Record<string, unknown>>).sort((a, b) => String(a.id).localeCompare(String(b.id)));
    expect(volumes).toEqual([
      { id: "vol-cache", name: "model-cache", size: 50, dataCenter: "EU-RO-1", type: "STANDARD" },
      { id: "vol-train", name: "training-dataset", size: 100, dataCenter: "US-KS-2", type: "HIGH_PERFORMANCE" },
    ]);
  });

  it("runs a job with run-endpoint and follows it with get-job-status", async () => {
    const run = await call(mcp.client, "run-endpoint", { endpointId: "echo", input: { prompt: "hello from MCP" } });
    expect(run.isError, JSON.stringify(run.payload)).toBe(false);
    expect(run.payload).toEqual({ id: expect.stringMatching(/^[A-Za-z0-9_-]+$/), status: "IN_QUEUE" });
    await cli.advance(0);
    const status = await call(mcp.client, "get-job-status", { endpointId: "echo", jobId: run.payload.id });
    expect(status.isError, JSON.stringify(status.payload)).toBe(false);
    expect(status.payload).toMatchObject({ id: run.payload.id, status: "COMPLETED", output: { prompt: "hello from MCP" }, delayTime: 0, executionTime: 0 });
    const missing = await call(mcp.client, "get-job-status", { endpointId: "echo", jobId: "no-such-job" });
    expect(missing.isError).toBe(true);
    expect(JSON.stringify(missing.payload)).toMatch(/404/);
  });

  it("reports the REST quota through the server's own rate-limit parsing", async () => {
    // The listing above used one request of the minute's three.
    for (let i = 0; i < 2; i++) expect((await call(mcp.client, "list-network-volumes")).isError).toBe(false);
    const limited = await call(mcp.client, "list-network-volumes");
    expect(limited.isError).toBe(true);
    expect(JSON.stringify(limited.payload)).toMatch(/the minute quota is exhausted; wait ~30s before retrying/);
    // Queue operations are not counted against the REST quota.
    expect((await call(mcp.client, "run-endpoint", { endpointId: "echo", input: {} })).isError).toBe(false);
    await cli.advance(30_000);
    expect((await call(mcp.client, "list-network-volumes")).isError).toBe(false);
  });

  it("turns 401 and 403 into tool errors", async () => {
    const stranger = await connect(cli.url, "not-a-configured-key");
    try {
      const denied = await call(stranger.client, "run-endpoint", { endpointId: "echo", input: {} });
      expect(denied.isError).toBe(true);
      expect(JSON.stringify(denied.payload)).toMatch(/401/);
      expect(JSON.stringify(denied.payload)).toMatch(/invalid API key/);
    } finally {
      await stranger.client.close();
    }
    const queueOnly = await connect(cli.url, QUEUE_ONLY_KEY);
    try {
      expect((await call(queueOnly.client, "run-endpoint", { endpointId: "echo", input: {} })).isError).toBe(false);
      const forbidden = await call(queueOnly.client, "list-network-volumes");
      expect(forbidden.isError).toBe(true);
      expect(JSON.stringify(forbidden.payload)).toMatch(/rest:read/);
    } finally {
      await queueOnly.client.close();
    }
  });
});
