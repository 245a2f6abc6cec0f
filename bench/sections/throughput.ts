import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchConfig, ECHO, supportsConfig } from "../lib/config.js";
import { call, pool, waitForHealth } from "../lib/http.js";
import { measure, type LoadResult } from "../lib/load.js";
import { startBare, startFloor, startMinipod, startPrism, type Server } from "../lib/processes.js";

export type Op = "run" | "status";
export type Target = "minipod" | "noJournal" | "floor" | "bare" | "prism";
export const TARGETS: readonly Target[] = ["minipod", "noJournal", "floor", "bare", "prism"];

export interface ThroughputResult {
  /** Every measured run, per operation and server, in the order they ran. */
  runs: Record<Op, Record<Target, LoadResult[]>>;
  /** Per round, minipod's rate divided by the other server's, measured back to back. */
  ratios: Record<Op, { bare: number[]; prism: number[]; floor: number[] }>;
  /** Per round, the floor's rate divided by Prism's: the most a server that keeps its jobs reached. */
  floorVsPrism: Record<Op, number[]>;
  prismError?: string;
  openapiBytes: number;
  rounds: number;
}

const RUN_BODY = JSON.stringify({ input: { prompt: "hello" } });
const STATUS_IDS = 1000;
const FIXED_ID = "3f1c2a8e-1b2c-4d5e-9f00-112233445566-u1";

/**
 * POST /run and GET /status under autocannon (16 connections, loopback) against minipod (real
 * clock, echo workers taking every job submitted, /status reading real completed jobs), the floor
 * of a server that keeps its jobs (one INSERT per job, servers/floor.ts), a bare Hono route (the
 * ceiling) and Prism mocking minipod's own OpenAPI document. The servers run at once but only one
 * is loaded at a time, in rounds (minipod, ..., prism, minipod, ...), so a busy neighbour on the
 * machine weighs on all of them alike and each round gives one ratio.
 */
export async function throughput(seconds: number, rounds: number, log: (line: string) => void): Promise<ThroughputResult> {
  const servers: Partial<Record<Target, Server>> = {};
  const result: ThroughputResult = {
    runs: { run: { minipod: [], noJournal: [], floor: [], bare: [], prism: [] }, status: { minipod: [], noJournal: [], floor: [], bare: [], prism: [] } },
    ratios: { run: { bare: [], prism: [], floor: [] }, status: { bare: [], prism: [], floor: [] } },
    floorVsPrism: { run: [], status: [] },
    openapiBytes: 0,
    rounds,
  };
  try {
    const minipod = (servers.minipod = await startMinipod({ config: await benchConfig([ECHO]) }));
    const doc = await (await fetch(`${minipod.url}/openapi.json`)).text();
    result.openapiBytes = doc.length;
    const openapiFile = join(tmpdir(), `minipod-bench-openapi-${process.pid}.json`);
    writeFileSync(openapiFile, doc);
    // The same minipod with the request journal off, to show what the journal costs per request.
    const noJournal = { journal: { maxEntries: 0 } };
    if (await supportsConfig(noJournal)) servers.noJournal = await startMinipod({ config: { ...(await benchConfig([ECHO])), ...noJournal } });
    servers.floor = await startFloor();
    servers.bare = await startBare();
    try {
      servers.prism = await startPrism(openapiFile);
    } catch (e) {
      result.prismError = (e as Error).message.split("\n").slice(0, 3).join(" ");
      log(`throughput: Prism could not be started: ${result.prismError}`);
    }

    // /status reads real jobs: submit some and let the echo workers finish them first.
    const ids: Partial<Record<Target, string[]>> = {};
    for (const target of ["minipod", "noJournal", "floor"] as const) {
      const server = servers[target];
      if (!server) continue;
      const list: string[] = (ids[target] = []);
      await pool(STATUS_IDS, 16, async () => {
        const r = await call(server.url, "POST", "/v2/echo/run", { input: { prompt: "hello" } });
        if (r.status !== 200) throw new Error(`${server.name} /run answered ${r.status}: ${JSON.stringify(r.body)}`);
        list.push(r.body.id as string);
      });
      if (target !== "floor") await waitForHealth(server.url, "echo", (h) => h.jobs.completed >= STATUS_IDS);
    }

    for (const op of ["run", "status"] as const) {
      for (let round = 1; round <= rounds; round++) {
        const rates: Partial<Record<Target, number>> = {};
        for (const target of TARGETS) {
          const server = servers[target];
          if (!server) continue;
          log(`throughput: ${op} round ${round}/${rounds} ${target}`);
          const statusIds = ids[target] ?? [FIXED_ID];
          let i = 0;
          const r =
            op === "run"
              ? await measure({ url: server.url, method: "POST", path: "/v2/echo/run", body: RUN_BODY, seconds })
              : await measure({ url: server.url, method: "GET", path: `/v2/echo/status/${statusIds[0]}`, nextPath: () => `/v2/echo/status/${statusIds[i++ % statusIds.length]}`, seconds });
          result.runs[op][target].push(r);
          rates[target] = r.rps;
        }
        if (rates.bare) result.ratios[op].bare.push(rates.minipod! / rates.bare);
        if (rates.prism) result.ratios[op].prism.push(rates.minipod! / rates.prism);
        if (rates.floor) result.ratios[op].floor.push(rates.minipod! / rates.floor);
        if (rates.floor && rates.prism) result.floorVsPrism[op].push(rates.floor / rates.prism);
      }
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
  return result;
}
