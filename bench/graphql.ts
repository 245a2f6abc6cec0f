/**
 * The GraphQL API's typical read beside the REST lists of the same pods: `myself { pods { ... } }`
 * with the selection of the service's Python library (`runpod.get_pods()`), against
 * `GET /v2/pods` and `GET /v1/pods`, on one minipod process with `--pods` pods. Each round runs
 * the three one after the other, each for `--seconds` with `--clients` requests in flight, so that
 * whatever else the machine does falls on all alike. Prints a table and writes
 * bench/RESULTS-graphql.md.
 *
 *   npm run build && npx tsx bench/graphql.ts [--pods 50] [--rounds 5] [--seconds 3] [--clients 8]
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { benchConfig, ECHO } from "./lib/config.js";
import { call } from "./lib/http.js";
import { BENCH, startMinipod } from "./lib/processes.js";

const { values } = parseArgs({ options: { pods: { type: "string" }, rounds: { type: "string" }, seconds: { type: "string" }, clients: { type: "string" } } });
const pods = Number(values.pods ?? 50);
const rounds = Number(values.rounds ?? 5);
const seconds = Number(values.seconds ?? 3);
const clients = Number(values.clients ?? 8);

/** The Python library's QUERY_POD selection (runpod/api/queries/pods.py). */
const MY_PODS = `query myPods { myself { pods {
  id containerDiskInGb costPerHr desiredStatus dockerArgs dockerId env gpuCount imageName lastStatusChange machineId
  memoryInGb name podType port ports uptimeSeconds vcpuCount volumeInGb volumeMountPath
  runtime { ports { ip isIpPublic privatePort publicPort type } }
  machine { gpuDisplayName }
} } }`;

const server = await startMinipod({ config: await benchConfig([ECHO]) });
for (let i = 0; i < pods; i++) {
  const r = await call(server.url, "POST", "/v2/pods", {
    name: `pod-${i}`,
    image: "me/train:1",
    gpu: { id: "NVIDIA GeForce RTX 4090", count: 1 },
    env: { RUN: String(i) },
    ports: ["8888/http", "22/tcp"],
  });
  if (r.status !== 201) throw new Error(`POST /v2/pods answered ${r.status}: ${JSON.stringify(r.body)}`);
}

interface Case {
  name: string;
  run: () => Promise<number>;
}
const size = (b: unknown) => Buffer.byteLength(JSON.stringify(b));
const check = (status: number, count: number, what: string) => {
  if (status !== 200 || count !== pods) throw new Error(`${what}: ${status}, ${count} pods`);
};
const cases: Case[] = [
  {
    name: "POST /graphql myself { pods }",
    run: async () => {
      const r = await call(server.url, "POST", "/graphql", { query: MY_PODS });
      check(r.status, r.body?.data?.myself?.pods?.length, "graphql");
      return size(r.body);
    },
  },
  {
    name: "GET /v2/pods",
    run: async () => {
      const r = await call(server.url, "GET", "/v2/pods");
      check(r.status, r.body?.pods?.length, "v2");
      return size(r.body);
    },
  },
  {
    name: "GET /v1/pods",
    run: async () => {
      const r = await call(server.url, "GET", "/v1/pods");
      check(r.status, r.body?.length, "v1");
      return size(r.body);
    },
  },
];

/** `clients` loops, each sending the next request when its answer is in, for `seconds`. */
async function burst(c: Case): Promise<{ rps: number; latencies: number[]; bytes: number }> {
  const latencies: number[] = [];
  let bytes = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        bytes = await c.run();
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { rps: latencies.length / seconds, latencies, bytes };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

// Warm-up: the schema is built on the first GraphQL request; JIT for all three.
for (const c of cases) for (let i = 0; i < 200; i++) await c.run();
const perCase = new Map(cases.map((c) => [c.name, { rps: [] as number[], latencies: [] as number[], bytes: 0 }]));
for (let r = 1; r <= rounds; r++) {
  for (const c of cases) {
    const b = await burst(c);
    const acc = perCase.get(c.name)!;
    acc.rps.push(b.rps);
    acc.latencies.push(...b.latencies);
    acc.bytes = b.bytes;
  }
  console.log(`round ${r}/${rounds}: ${cases.map((c) => `${c.name} ${Math.round(perCase.get(c.name)!.rps.at(-1)!)} req/s`).join(", ")}`);
}
await server.stop();

const gqlRps = median(perCase.get(cases[0]!.name)!.rps);
const rows = cases.map((c) => {
  const a = perCase.get(c.name)!;
  const rps = median(a.rps);
  return `| ${c.name} | ${Math.round(rps).toLocaleString("en")} | ${median(a.latencies).toFixed(2)} | ${pct(a.latencies, 0.99).toFixed(2)} | ${a.bytes.toLocaleString("en")} | ${(gqlRps / rps).toFixed(2)}x |`;
});
const report = `# GraphQL beside REST: the list of pods

Written by \`npx tsx bench/graphql.ts\` (after \`npm run build\`). Do not edit by hand.

- date: ${new Date().toISOString()}
- machine: ${cpus()[0]?.model ?? "?"} × ${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM; node ${process.version}; load average ${loadavg()[0]!.toFixed(1)} at the end (shared with whatever else ran: the ratios matter more than the rates)
- one minipod process from dist/ (logs at warn, rate limits off), ${pods} RUNNING GPU pods; all traffic on 127.0.0.1
- ${rounds} rounds; in each, the three requests one after the other, each for ${seconds} s with ${clients} in flight; req/s is the median of the rounds, latencies over every request

The GraphQL query is the Python library's \`runpod.get_pods()\` (\`myself { pods { ... } }\`, 20 fields and two nested objects per pod); the REST lists answer every field of every pod.

| request | req/s | p50 ms | p99 ms | answer bytes | GraphQL ÷ this |
|---|---:|---:|---:|---:|---:|
${rows.join("\n")}

Per round (req/s): ${cases.map((c) => `${c.name}: ${perCase.get(c.name)!.rps.map((x) => Math.round(x)).join(", ")}`).join("; ")}.

Where the time goes: a document that parsed and validated is kept by its text, so a repeated query is only executed; graphql-js then resolves each field of each pod as its own function call (and checks each value against its type), where the REST lists build one JSON object per pod.
`;
writeFileSync(join(BENCH, "RESULTS-graphql.md"), report);
console.log(report);
