/**
 * The README's test suite in full (test/examples/client-resilience.test.ts) on the auto clock (the
 * default of createEmulator) and on the manual clock, side by side: the wall time of each test and
 * of the file (emulator start and close included), over several runs, alternating the clocks.
 *
 *   npx tsx bench/clock-modes.ts [--runs 5]     (from the repository's root; writes bench/RESULTS-clock.md)
 *
 * Each run is the repository's vitest on one copy of the file whose createEmulator is given the
 * clock, without the suite's global setup (the file imports src/, not dist/).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SUITE = "test/examples/client-resilience.test.ts";
const MODES = ["auto", "manual"] as const;
type Mode = (typeof MODES)[number];

interface Run {
  fileMs: number;
  tests: Record<string, number>;
}

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const runs = Number(values.runs);

function runOnce(mode: Mode): Run {
  const source = readFileSync(join(ROOT, SUITE), "utf8");
  if (!source.includes("createEmulator({\n")) throw new Error(`${SUITE} no longer calls createEmulator({ ... }) as this bench expects`);
  const copy = `test/examples/client-resilience.${mode}-${process.pid}.tmp.test.ts`;
  writeFileSync(join(ROOT, copy), source.replace("createEmulator({\n", `createEmulator({\n    clock: "${mode}",\n`));
  const dir = mkdtempSync(join(tmpdir(), "minipod-bench-clock-"));
  const config = join(dir, "vitest.config.mjs");
  const report = join(dir, "report.json");
  writeFileSync(config, `export default { test: { root: ${JSON.stringify(ROOT)}, include: [${JSON.stringify(copy)}], testTimeout: 60000 } };\n`);
  try {
    const r = spawnSync(process.execPath, [join(ROOT, "node_modules/vitest/vitest.mjs"), "run", "--config", config, "--root", ROOT, "--reporter=json", `--outputFile=${report}`], { cwd: ROOT, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
    if (r.status !== 0) throw new Error(`vitest failed on the ${mode} clock:\n${r.stdout}${r.stderr}`);
    const json = JSON.parse(readFileSync(report, "utf8")) as { testResults: Array<{ startTime: number; endTime: number; assertionResults: Array<{ title: string; duration: number }> }> };
    const file = json.testResults[0]!;
    return { fileMs: file.endTime - file.startTime, tests: Object.fromEntries(file.assertionResults.map((t) => [t.title, t.duration])) };
  } finally {
    rmSync(join(ROOT, copy), { force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const results: Record<Mode, Run[]> = { auto: [], manual: [] };
for (let i = 1; i <= runs; i++) {
  // Alternating, so that whatever else the machine does falls on both clocks alike.
  for (const mode of i % 2 ? MODES : [...MODES].reverse()) {
    process.stderr.write(`run ${i}/${runs}: ${mode}\n`);
    results[mode].push(runOnce(mode));
  }
}

const ms = (n: number) => n.toFixed(0);
const titles = Object.keys(results.auto[0]!.tests);
const lines = [
  "# The README's test suite on the auto and the manual clock",
  "",
  "Written by `npx tsx bench/clock-modes.ts` (bench/clock-modes.ts). Do not edit by hand.",
  "",
  `- date: ${new Date().toISOString()}`,
  `- node ${process.version}; ${runs} runs of each clock, alternating; vitest on ${SUITE} with \`clock\` given to its createEmulator; load average at the end ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`,
  "",
  "Wall ms, the median of the runs (every run in brackets). A test's time is vitest's for the test alone; the file's includes the emulator's start and close.",
  "",
  "| | auto | manual |",
  "|---|---:|---:|",
  ...titles.map((t) => `| ${t} | ${ms(median(results.auto.map((r) => r.tests[t]!)))} (${results.auto.map((r) => ms(r.tests[t]!)).join(", ")}) | ${ms(median(results.manual.map((r) => r.tests[t]!)))} (${results.manual.map((r) => ms(r.tests[t]!)).join(", ")}) |`),
  `| **the file** | **${ms(median(results.auto.map((r) => r.fileMs)))}** (${results.auto.map((r) => ms(r.fileMs)).join(", ")}) | **${ms(median(results.manual.map((r) => r.fileMs)))}** (${results.manual.map((r) => ms(r.fileMs)).join(", ")}) |`,
  "",
];
writeFileSync(join(ROOT, "bench/RESULTS-clock.md"), lines.join("\n"));
process.stdout.write(lines.join("\n") + "\n");
