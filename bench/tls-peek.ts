/**
 * What TLS on minipod's port costs plain HTTP: `POST /run` with TLS on (each new connection's first
 * byte read, then handed to the HTTP server) and off (node's HTTP server takes the connection
 * itself), in alternated rounds, on new connections (one request each: the peek's whole cost) and
 * on keep-alive ones (the peek never met after the first request). The client runs in the same
 * process as minipod: the figures are the process's CPU time per request and the median wall time
 * of a request. Prints a table and writes it to bench/RESULTS-tls.md.
 *
 *   npx tsx bench/tls-peek.ts [--rounds 5] [--requests 1500]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createEmulator } from "../src/index.js";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" }, requests: { type: "string", default: "1500" } } });
const ROUNDS = Number(values.rounds);
const REQUESTS = Number(values.requests);
const BODY = '{"input":{"prompt":"hi"}}';

function post(port: number, agent: Agent | false): Promise<number> {
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/v2/echo/run", method: "POST", agent, headers: { authorization: "Bearer k", "content-type": "application/json" } }, (res) => {
      res.resume();
      res.on("end", () => (res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - start) / 1000) : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on("error", reject);
    req.end(BODY);
  });
}

/** `REQUESTS` requests, 8 at a time: CPU µs per request and the median wall µs of one. */
async function load(port: number, agent: Agent | false): Promise<{ cpu: number; wall: number }> {
  const times: number[] = [];
  const cpu = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next++ < REQUESTS) times.push(await post(port, agent));
    }),
  );
  const used = process.cpuUsage(cpu);
  times.sort((a, b) => a - b);
  return { cpu: (used.user + used.system) / times.length, wall: times[Math.floor(times.length / 2)]! };
}

const dir = mkdtempSync(join(tmpdir(), "minipod-bench-tls-"));
const config = { rateLimits: { enabled: false }, endpoints: [{ id: "echo", handler: "echo", workersMin: 1, workersMax: 1, coldStartMs: 0 }] };
const servers = { on: await createEmulator({ config, tls: { dir } }), off: await createEmulator({ config, tls: false }) };
const rows: Record<string, Record<"on" | "off", Array<{ cpu: number; wall: number }>>> = { "new connection": { on: [], off: [] }, "keep-alive": { on: [], off: [] } };
for (const side of ["on", "off"] as const) await load(servers[side].port, false); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const side of round % 2 ? (["off", "on"] as const) : (["on", "off"] as const)) {
    rows["new connection"]![side].push(await load(servers[side].port, false));
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    rows["keep-alive"]![side].push(await load(servers[side].port, agent));
    agent.destroy();
  }
}
await servers.on.close();
await servers.off.close();
rmSync(dir, { recursive: true, force: true });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const lines = [
  "| connections | CPU µs/request, TLS on | TLS off | ratio | median wall µs, TLS on | TLS off | ratio |",
  "|---|---:|---:|---:|---:|---:|---:|",
  ...Object.entries(rows).map(([kind, r]) => {
    const [cOn, cOff, wOn, wOff] = [median(r.on.map((x) => x.cpu)), median(r.off.map((x) => x.cpu)), median(r.on.map((x) => x.wall)), median(r.off.map((x) => x.wall))];
    return `| ${kind} | ${cOn.toFixed(0)} | ${cOff.toFixed(0)} | ${(cOn / cOff).toFixed(2)} | ${wOn.toFixed(0)} | ${wOff.toFixed(0)} | ${(wOn / wOff).toFixed(2)} |`;
  }),
];
const report = `# TLS on the port: what plain HTTP pays

\`npx tsx bench/tls-peek.ts --rounds ${ROUNDS} --requests ${REQUESTS}\` on ${new Date().toISOString().slice(0, 10)}, load average ${loadavg()[0]!.toFixed(1)} at the end:
\`POST /run\` of an echo endpoint, 8 at a time, client and minipod in one process; medians over ${ROUNDS} alternated rounds.

${lines.join("\n")}
`;
process.stdout.write(report);
writeFileSync(new URL("RESULTS-tls.md", import.meta.url), report);
