import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchConfig, ECHO } from "../lib/config.js";
import { startMinipod, startPrism } from "../lib/processes.js";

export interface ColdStartResult {
  minipodMs: number[];
  prismMs: number[];
  prismError?: string;
}

/**
 * Process start to the first 200 on /v2/echo/health: `node bin/minipod.js` (dist/, in-memory
 * database) `times` times, and Prism mocking the same OpenAPI document.
 */
export async function coldStart(times: number, log: (line: string) => void): Promise<ColdStartResult> {
  const result: ColdStartResult = { minipodMs: [], prismMs: [] };
  const config = await benchConfig([ECHO]);
  const openapiFile = join(tmpdir(), `minipod-bench-openapi-cold-${process.pid}.json`);
  for (let i = 0; i < times; i++) {
    log(`cold start: minipod ${i + 1}/${times}`);
    const s = await startMinipod({ config });
    result.minipodMs.push(s.startMs);
    if (i === 0) writeFileSync(openapiFile, await (await fetch(`${s.url}/openapi.json`)).text());
    await s.stop();
  }
  for (let i = 0; i < times; i++) {
    log(`cold start: prism ${i + 1}/${times}`);
    try {
      const s = await startPrism(openapiFile);
      result.prismMs.push(s.startMs);
      await s.stop();
    } catch (e) {
      result.prismError = (e as Error).message.split("\n")[0];
      break;
    }
  }
  return result;
}
