/**
 * `npx tsx bench/hostile.ts` (after `npm run build`): the hostile pass of `npm run bench -- --only
 * hostile` alone, without the bench's other dependencies; writes bench/RESULTS-hostile.md. Exits 1
 * when a case saw a 5xx that is not a worker's documented 502, or a hang.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./lib/processes.js";
import { found, writeHostile } from "./sections/hostile.js";

if (!existsSync(join(ROOT, "dist/minipod.js"))) throw new Error("dist/ is missing: run `npm run build` first");
const log = (line: string) => process.stderr.write(`[hostile ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const r = await writeHostile(log);
const bad = found(r);
for (const c of bad) log(`found: ${c.surface}: ${c.name}: ${JSON.stringify(c.statuses)}`);
process.exit(bad.length ? 1 : 0);
