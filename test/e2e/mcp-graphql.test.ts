import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { callTool, connectMcp } from "../support/mcp.js";

/**
 * The service's MCP server's GraphQL tools (GPU capacity by CUDA version, the Hub's listings and
 * deploy, the public endpoints catalogue) against minipod's /graphql, and what REST then shows.
 */
const KEY = "mcp-graphql-key";
const hubConfig = {
  gpuIds: "ADA_24",
  gpuCount: 1,
  containerDiskInGb: 15,
  allowedCudaVersions: ["12.8", "12.4"],
  env: [
    { key: "MODEL_NAME", input: { type: "string", required: true } },
    { key: "MAX_LEN", input: { type: "number", default: 4096 } },
  ],
};

describe("the MCP server's GraphQL tools against minipod", { timeout: 60_000 }, () => {
  let emu: Emulator;
  let mcp: Awaited<ReturnType<typeof connectMcp>>;
  beforeAll(async () => {
    emu = await createEmulator({
      clock: "manual",
      config: {
        auth: { keys: [{ key: KEY }] },
        hub: [
          { repo: "acme/worker-llm", title: "LLM worker", description: "Serves a model", imageName: "acme/worker-llm:1.2.0", tagName: "v1.2.0", config: hubConfig, deploys: 10 },
          { repo: "acme/pod-notebook", type: "POD", imageName: "acme/notebook:1", category: "image" },
        ],
      },
    });
    mcp = await connectMcp(emu.url, KEY, mkdtempSync(join(tmpdir(), "minipod-mcp-gql-")), { graphql: true });
  });
  afterAll(async () => {
    await mcp?.client.close();
    emu?.close();
  });

  it("get-capacity: the CUDA matrix, and a probe of chosen versions", async () => {
    const matrix = await callTool(mcp.client, "get-capacity", { gpuTypeIds: ["4090"] });
    expect(matrix.isError, JSON.stringify(matrix.payload)).toBe(false);
    const row = matrix.payload.items[0];
    expect(row).toMatchObject({ id: "NVIDIA GeForce RTX 4090", memoryGb: 24, stockStatus: "High", cudaVersions: { "12.4": "AVAILABLE", "13.0": "AVAILABLE" } });
    const price = (await (await fetch(`${emu.url}/v2/catalog/gpus/NVIDIA%20GeForce%20RTX%204090`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as { price: { secure: number } };
    expect(row.pricePerHr).toBe(price.price.secure);
    const probe = await callTool(mcp.client, "get-capacity", { gpuTypeIds: ["RTX 3070", "A40"], cudaVersions: ["12.4"], gpuCount: 2, secureCloudOnly: true });
    expect(probe.isError, JSON.stringify(probe.payload)).toBe(false);
    const byId = Object.fromEntries(probe.payload.items.map((r: { id: string }) => [r.id, r]));
    const a40 = (await (await fetch(`${emu.url}/v2/catalog/gpus/NVIDIA%20A40`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as { price: { secure: number } };
    expect(byId["NVIDIA A40"].cudaVersions["12.4"]).toEqual({ stock: "High", pricePerHr: a40.price.secure * 2 });
    // Community cloud only: out when the secure cloud is asked for, as /v2/catalog says.
    expect(byId["NVIDIA GeForce RTX 3070"].cudaVersions["12.4"]).toEqual({ stock: "Out", pricePerHr: null });
  });

  it("list-hub-repos lists the configured listings; list-public-endpoints finds none", async () => {
    const repos = await callTool(mcp.client, "list-hub-repos", { includeConfig: true, type: "SERVERLESS" });
    expect(repos.isError, JSON.stringify(repos.payload)).toBe(false);
    expect(repos.payload.items).toEqual([
      expect.objectContaining({
        repo: "acme/worker-llm",
        title: "LLM worker",
        type: "SERVERLESS",
        deploys: 10,
        listedRelease: expect.objectContaining({ tagName: "v1.2.0", imageName: "acme/worker-llm:1.2.0", config: hubConfig }),
      }),
    ]);
    const publicEndpoints = await callTool(mcp.client, "list-public-endpoints");
    expect(publicEndpoints.isError, JSON.stringify(publicEndpoints.payload)).toBe(false);
    expect(publicEndpoints.payload.items).toEqual([]);
  });

  it("deploy-hub-repo saves an endpoint through saveEndpoint: REST shows it and the queue serves it", async () => {
    const missing = await callTool(mcp.client, "deploy-hub-repo", { repo: "acme/worker-llm" });
    expect(missing.isError).toBe(true);
    expect(JSON.stringify(missing.payload)).toContain("MODEL_NAME");
    const res = await callTool(mcp.client, "deploy-hub-repo", { repo: "acme/worker-llm", env: { MODEL_NAME: "tiny" }, workersMax: 2, name: "llm" });
    expect(res.isError, JSON.stringify(res.payload)).toBe(false);
    const saved = res.payload.endpoint;
    expect(saved).toMatchObject({ name: "llm", gpuIds: "ADA_24", gpuCount: 1, workersMin: 0, workersMax: 2, flashBootType: "FLASHBOOT" });
    const rest = async (path: string, init: RequestInit = {}) => (await fetch(`${emu.url}${path}`, { ...init, headers: { authorization: `Bearer ${KEY}` } })).json() as Promise<any>;
    const endpoint = await rest(`/v2/serverless/${saved.id}`);
    expect(endpoint).toMatchObject({
      name: "llm",
      image: "acme/worker-llm:1.2.0",
      env: { MODEL_NAME: "tiny", MAX_LEN: "4096" },
      disk: 15,
      gpu: { pools: ["ADA_24"], allowedCudaVersions: ["12.8", "12.4"] },
    });
    const job = await rest(`/v2/${saved.id}/run`, { method: "POST", body: JSON.stringify({ input: { prompt: "hi" } }) });
    await emu.runUntilIdle();
    expect(await rest(`/v2/${saved.id}/status/${job.id}`)).toMatchObject({ status: "COMPLETED", output: { prompt: "hi" } });
  });
});
