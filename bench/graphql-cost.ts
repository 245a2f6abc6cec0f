/**
 * The GraphQL query cost against CPU: for queries at and past the cost bound (many aliases of the
 * catalog's lists, wide selections, an account's lists), the standard introspection query and the
 * queries of the service's clients, the cost minipod counts and the CPU one request takes in
 * process (parse, validation and execution; the median of `--rounds`). Writes
 * bench/RESULTS-graphql-cost.md.
 *
 *   npm run build && npx tsx bench/graphql-cost.ts [--rounds 7]
 */
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { getIntrospectionQuery } from "graphql";
import { BENCH, ROOT } from "./lib/processes.js";

const { values } = parseArgs({ options: { rounds: { type: "string" } } });
const rounds = Number(values.rounds ?? 7);
const { createEmulator } = (await import(pathToFileURL(join(ROOT, "dist/index.js")).href)) as typeof import("../src/index.js");
const { GRAPHQL_MAX_COST } = (await import(pathToFileURL(join(ROOT, "dist/http/routes/graphql/cost.js")).href)) as typeof import("../src/http/routes/graphql/cost.js");

const e = await createEmulator({ config: { rateLimits: { enabled: false }, endpoints: [{ id: "echo", handler: "echo", workersMin: 0 }] } });
const post = async (query: string) => {
  const res = await e.app.request("http://127.0.0.1/graphql", { method: "POST", headers: { authorization: "Bearer bench", "content-type": "application/json" }, body: JSON.stringify({ query }) });
  return { status: res.status, text: await res.text() };
};
// An account with as many of each as the cost counts a list to hold (10).
for (let i = 0; i < 10; i++) {
  await post(`mutation { saveTemplate(input: { name: "t${i}", imageName: "me/img:${i}", containerDiskInGb: 5, volumeInGb: 0, dockerArgs: "", env: [{ key: "A", value: "b" }] }) { id } }`);
  await post(`mutation { podFindAndDeployOnDemand(input: { name: "p${i}", imageName: "me/img:1", gpuTypeId: "NVIDIA GeForce RTX 4090", gpuCount: 1, cloudType: ALL, containerDiskInGb: 5, volumeInGb: 0 }) { id } }`);
}

const aliases = (n: number, body: string) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${body}`).join(" ")} }`;
const lowest = "gpuTypes { lowestPrice(input: { gpuCount: 1 }) { stockStatus } }";
const wideGpu = "gpuTypes { id displayName manufacturer memoryInGb cudaCores secureCloud communityCloud securePrice communityPrice secureSpotPrice communitySpotPrice maxGpuCount pool }";
const dcs = "dataCenters { id name location gpuAvailability { gpuTypeId displayName stockStatus available } }";
const pods = "myself { pods { id name desiredStatus costPerHr gpuCount imageName env runtime { ports { ip publicPort } } machine { gpuDisplayName } } }";

/**
 * The Python library's queries and mutations: the GraphQL text in each module's strings, read from
 * its sources as published in $MINIPOD_CLIENTS/runpod-python (none without it).
 */
function pythonQueries(): Array<{ name: string; query: string }> {
  const out: Array<{ name: string; query: string }> = [];
  const clients = process.env.MINIPOD_CLIENTS;
  if (!clients) return out;
  for (const kind of ["queries", "mutations"]) {
    const dir = join(clients, "runpod-python/runpod/api", kind);
    for (const f of readdirSync(dir).filter((x) => x.endsWith(".py") && x !== "__init__.py")) {
      const text = readFileSync(join(dir, f), "utf8");
      // Plain strings and f-strings (their placeholders given sample values).
      for (const m of text.matchAll(/f?"""\s*((?:query|mutation)[\s\S]*?)"""/g)) {
        const query = m[1]!.replace(/"\{[a-z_]+\}"/g, '"x"').replace(/\{\{/g, "{").replace(/\}\}/g, "}").replace(/(?<!\{)\{[a-z_]+\}/g, "1");
        out.push({ name: `runpod-python ${kind}/${f}`, query });
      }
    }
  }
  return out;
}

const cases: Array<{ name: string; query: string }> = [
  { name: "660 aliases of gpuTypes { lowestPrice { stockStatus } }", query: aliases(660, lowest) },
  { name: "the standard introspection query", query: getIntrospectionQuery() },
  { name: "the explorer's default query", query: "query MyPods { myself { id pods { id name desiredStatus costPerHr } endpoints { id name gpuIds workersMax } } }" },
  ...pythonQueries(),
];
/** For each shape, the most aliases the bound accepts: the most expensive queries accepted. */
const unit = async (body: string) => {
  for (let n = 1; ; n++) if ((await post(aliases(n, body))).status === 400) return n - 1;
};
for (const [shape, body] of [
  ["gpuTypes { lowestPrice { stockStatus } }", lowest],
  ["gpuTypes with 13 fields", wideGpu],
  ["dataCenters { gpuAvailability }", dcs],
  ["myself { pods { ... } }", pods],
] as const) {
  const n = await unit(body);
  cases.push({ name: `${n} aliases of ${shape} (the most accepted)`, query: aliases(n, body) });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows: string[] = [];
let worst = { name: "", ms: 0 };
for (const c of cases) {
  const first = await post(c.query);
  // A builder's text that needs its Python to be a query (the e2e tests run those through the library).
  if (first.status === 400 && first.text.includes("GRAPHQL_PARSE_FAILED")) continue;
  const cpu: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.cpuUsage();
    await post(c.query);
    const used = process.cpuUsage(start);
    cpu.push((used.user + used.system) / 1000);
  }
  const costMatch = /costs ([\d,]+)/.exec(first.text);
  const ms = median(cpu);
  if (first.status === 200 && ms > worst.ms) worst = { name: c.name, ms };
  rows.push(`| ${c.name} | ${first.status} | ${costMatch ? costMatch[1] : "within"} | ${(first.text.length / 1024).toFixed(1)} KB | ${ms.toFixed(1)} ms |`);
  process.stderr.write(`${c.name}: ${first.status}, ${ms.toFixed(1)} ms\n`);
}
await e.close();

const text = [
  "# GraphQL query cost and CPU",
  "",
  "Written by `npx tsx bench/graphql-cost.ts` (after `npm run build`). Do not edit by hand.",
  "",
  `- date: ${new Date().toISOString()}`,
  `- node ${process.version}; in process (no socket), CPU of one request (parse, validation, execution) by process.cpuUsage, median of ${rounds}; load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`,
  `- the bound: cost ${GRAPHQL_MAX_COST.toLocaleString("en-US")} (fields × the sizes of the lists they are under); an account of 10 pods and 10 templates`,
  "",
  "| query | status | cost past the bound | answer | CPU |",
  "|---|---:|---:|---:|---:|",
  ...rows,
  "",
  `Most expensive accepted: **${worst.name}, ${worst.ms.toFixed(1)} ms** of CPU.`,
  "",
].join("\n");
writeFileSync(join(BENCH, "RESULTS-graphql-cost.md"), text);
process.stdout.write(text);
