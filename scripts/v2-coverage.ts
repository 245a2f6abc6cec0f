/**
 * Prints the coverage table of the REST v2 surface (`npm run coverage:v2`), or writes it into
 * docs/management-rest.md with `--write`: every operation of the service's description, whether minipod serves it,
 * and the statuses the conformance tour got from it (each checked against the description).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { buildEmulator } from "../src/compose/emulator.js";
import { relative } from "node:path";
import { BEGIN, COVERAGE_DOC, coverageTable, END } from "../test/contract/coverage.js";
import { tour } from "../test/contract/tour.js";

const { core, app } = await buildEmulator({ clock: "manual" });
const served = new Set(app.routes.filter((r) => r.method !== "ALL").map((r) => `${r.method} ${r.path.replace(/:([^/]+)/g, "{$1}")}`));
core.close();
const table = coverageTable(await tour(), served);
if (process.argv.includes("--write")) {
  const text = readFileSync(COVERAGE_DOC, "utf8");
  const from = text.indexOf(BEGIN);
  const to = text.indexOf(END);
  const where = relative(process.cwd(), COVERAGE_DOC);
  if (from === -1 || to === -1) throw new Error(`${where} has no ${BEGIN} … ${END} block to fill`);
  writeFileSync(COVERAGE_DOC, `${text.slice(0, from + BEGIN.length)}\n${table}\n${text.slice(to)}`);
  console.log(`wrote the REST v2 coverage table into ${where}`);
} else {
  console.log(table);
}
