/**
 * A warm Flash call through minipod beside the floor of any server on this machine: the same call
 * through a bare node:http server that does nothing but hand the call to the same worker process
 * and its result back (bench/servers/worker-floor.ts). Both run minipod's own Flash worker
 * (`minipod.runtimes.flash`, its job loop); the callers are the same; the two servers are measured
 * alternately in one run, so that the machine's own cost of a call through a second process (two
 * more hand-overs between processes than a round trip has) shows apart from minipod's.
 *
 * Each round measures, for each server and each caller, `--calls` warm calls (a FunctionRequest
 * posted to `/runsync`) and as many round trips (`GET /health` of the same server), and the ratio
 * of the warm call to the function called in-process plus one round trip (minipod's aim: within
 * 2×). Callers: node's fetch in a worker thread (a process's own event loop), and, when the
 * interpreter has it, a Python `requests` session in a process of its own (the library runpod's
 * clients send with). CPU: ms of CPU time a call of this process's main thread (the server
 * measured) and of the worker process, from /proc (Linux).
 * Prints a table and writes it to bench/RESULTS-flash-floor.md (what follows the KEPT line stays).
 *
 *   MINIPOD_PYTHON=/path/to/venv/bin/python npx tsx bench/flash-floor.ts [--calls 500] [--rounds 3]
 *
 * Keep --calls at 500 or under: /runsync allows 2,000 requests per 10 s on an endpoint (minipod
 * has one endpoint a caller, each called 600 times to warm up, then --calls times a round).
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { fetchCaller, writeKeeping } from "./lib/flash-bench.js";
import { startWorkerFloor } from "./servers/worker-floor.js";
import { createEmulator } from "../src/index.js";

const { values } = parseArgs({ options: { calls: { type: "string" }, rounds: { type: "string" } } });
const calls = Number(values.calls ?? 500);
const rounds = Number(values.rounds ?? 3);
const python = process.env.MINIPOD_PYTHON;
if (!python) throw new Error("set MINIPOD_PYTHON to an interpreter with cloudpickle (and requests for the Python caller)");
const packageDir = fileURLToPath(new URL("../python/src", import.meta.url));
const RESULTS = new URL("./RESULTS-flash-floor.md", import.meta.url);
const KEPT = "<!-- KEPT: what follows is kept when bench/flash-floor.ts writes this file again -->";
const headers = { authorization: "Bearer bench", "content-type": "application/json" };
const CODE = "def add(a, b):\n    return {'sum': a + b}\n";
const request = (i: number) => ({ input: { function_name: "add", function_code: CODE, args: [i, 1], kwargs: {}, serialization_format: "json", execution_type: "function" } });

const nodeCaller = fetchCaller(headers);
const viaNode = (url: string, method: string, bodies: (string | undefined)[]) => nodeCaller.call(url, method, bodies, method === "POST");

/** A `requests` session in a process of its own: 20 calls to warm up, then `n` warm calls and `n` round trips (ms). */
const PYTHON_CALLER = `
import json, sys, time
import requests
runsync, health, n, code = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
session = requests.Session()
headers = {"Authorization": "Bearer bench"}
def call(i):
    body = {"input": {"function_name": "add", "function_code": code, "args": [i, 1], "kwargs": {}, "serialization_format": "json", "execution_type": "function"}}
    answer = session.post(runsync, json=body, headers=headers, timeout=10).json()
    assert answer["status"] == "COMPLETED", answer
def trip(i):
    session.get(health, headers=headers, timeout=10).json()
def timed(send):
    times = []
    for i in range(n):
        t = time.perf_counter()
        send(i)
        times.append((time.perf_counter() - t) * 1000)
    return times
for i in range(20):
    call(i)
    trip(i)
print(json.dumps({"warm": timed(call), "trips": timed(trip)}))
`;
const pythonCallerWhyNot = (() => {
  const check = spawnSync(python, ["-c", "import requests"], { encoding: "utf8" });
  return check.status === 0 ? undefined : `skipped: ${python} cannot import requests`;
})();
const viaPython = (runsync: string, health: string, n: number) =>
  new Promise<{ warm: number[]; trips: number[] }>((resolve, reject) =>
    execFile(python, ["-c", PYTHON_CALLER, runsync, health, String(n), CODE], { timeout: 300_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout.trim().split("\n").pop()!) as { warm: number[]; trips: number[] }),
    ),
  );

// CPU time from /proc (Linux), ms: this process's main thread, and a worker process.
const TICK_MS = 10;
const cpuMs = (stat: string): number | undefined => {
  if (!existsSync(stat)) return undefined;
  const fields = readFileSync(stat, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
};
const MAIN = `/proc/${process.pid}/task/${process.pid}/stat`;
/** Calls made to each target before the rounds. */
const WARM_UP = 600;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Target {
  runsync: string;
  health: string;
  workerStat: () => string;
}
interface Server {
  name: string;
  node: Target;
  python: Target;
}
interface Row {
  round: number;
  server: string;
  caller: string;
  warm: number;
  trip: number;
  main: number | undefined;
  worker: number | undefined;
}

const emu = await createEmulator({ clock: "real", log: () => {} });
const floor = await startWorkerFloor(python, packageDir);
const rows: Row[] = [];
try {
  // One endpoint a caller (each with its worker process): /runsync allows 2,000 requests per 10 s on an endpoint.
  const endpoint = async (name: string) => {
    const saved = (await fetch(`${emu.url}/graphql`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        query: "mutation($input: EndpointInput) { saveEndpoint(input: $input) { id } }",
        // idleTimeout: the worker stays up for the whole run.
        variables: { input: { name, workersMax: 1, idleTimeout: 3600, instanceIds: ["cpu3c-1-2"], template: { name, imageName: "runpod/flash-cpu:py3.12-latest" } } },
      }),
    }).then((r) => r.json())) as { data: { saveEndpoint: { id: string } } };
    return saved.data.saveEndpoint.id;
  };
  // The stat file of minipod's worker process of an endpoint (its RUNPOD_ENDPOINT_ID).
  const workerOf = (id: string) => () => {
    const found = spawnSync("pgrep", ["-P", String(process.pid), "-f", "minipod.runtimes.flash"], { encoding: "utf8" });
    const pid = found.stdout
      ?.trim()
      .split("\n")
      .find((p) => p !== "" && existsSync(`/proc/${p}/environ`) && readFileSync(`/proc/${p}/environ`, "utf8").split("\0").includes(`RUNPOD_ENDPOINT_ID=${id}`));
    return pid ? `/proc/${pid}/stat` : "";
  };
  const minipodTarget = (id: string): Target => ({ runsync: `${emu.url}/v2/${id}/runsync`, health: `${emu.url}/v2/${id}/health`, workerStat: workerOf(id) });
  const floorTarget: Target = { runsync: `${floor.url}/v2/floor/runsync`, health: `${floor.url}/v2/floor/health`, workerStat: () => `/proc/${floor.workerPid}/stat` };
  const servers: Server[] = [
    { name: "minipod", node: minipodTarget(await endpoint("bench-node")), python: minipodTarget(await endpoint("bench-python")) },
    { name: "floor", node: floorTarget, python: floorTarget },
  ];
  const bodies = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify(request(i)));
  // The first calls start minipod's worker processes; then enough calls for node's compiler to
  // have optimised what a call runs (the first few hundred run slower), within the rate limit.
  for (const s of servers) {
    for (const t of [s.node, s.python]) {
      await viaNode(t.runsync, "POST", bodies(WARM_UP));
      await viaNode(t.health, "GET", Array<undefined>(WARM_UP).fill(undefined));
    }
  }
  for (let round = 1; round <= rounds; round++) {
    // A, B then B, A: neither server always goes first.
    for (const s of round % 2 === 1 ? servers : [...servers].reverse()) {
      const stat = s.node.workerStat();
      const [main0, worker0] = [cpuMs(MAIN), cpuMs(stat)];
      const warm = await viaNode(s.node.runsync, "POST", bodies(calls));
      const per = (a: number | undefined, b: number | undefined, n = calls) => (a === undefined || b === undefined ? undefined : (b - a) / n);
      const [main, worker] = [per(main0, cpuMs(MAIN)), per(worker0, cpuMs(stat))];
      const trips = await viaNode(s.node.health, "GET", Array<undefined>(calls).fill(undefined));
      rows.push({ round, server: s.name, caller: "node fetch, worker thread", warm: median(warm), trip: median(trips), main, worker });
      if (pythonCallerWhyNot === undefined) {
        const pyStat = s.python.workerStat();
        const pyWorker0 = cpuMs(pyStat);
        const py = await viaPython(s.python.runsync, s.python.health, calls);
        // The worker's CPU over the caller's 20 calls to warm up and its warm calls.
        rows.push({ round, server: s.name, caller: "Python requests session", warm: median(py.warm), trip: median(py.trips), main: undefined, worker: per(pyWorker0, cpuMs(pyStat), calls + 20) });
      }
    }
  }
  const fnMs = Number(spawnSync(python, ["-c", `import timeit\n${CODE}\nn=100000\nprint(timeit.timeit(lambda: add(2, 1), number=n) / n * 1000)`], { encoding: "utf8" }).stdout.trim());
  const ratio = (r: Row) => r.warm / (r.trip + fnMs);
  const ms = (x: number | undefined, digits = 2) => (x === undefined ? "" : x.toFixed(digits));
  const summary = (server: string, caller: string) => {
    const mine = rows.filter((r) => r.server === server && r.caller === caller);
    return mine.length === 0 ? "" : mine.map((r) => ratio(r).toFixed(2)).join(", ");
  };
  const callers = [...new Set(rows.map((r) => r.caller))];
  const report = [
    "# A warm Flash call: minipod beside the floor of any server",
    "",
    `\`npx tsx bench/flash-floor.ts --calls ${calls} --rounds ${rounds}\` on ${cpus().length} cores (load ${loadavg()[0]!.toFixed(2)}, ${loadavg()[1]!.toFixed(2)} over 5 minutes), ` +
      `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC; ms, medians of ${calls} calls.`,
    "The same worker process code on both (minipod's Flash runtime and job loop); the floor server does nothing but hand the call to it and the result back.",
    `The function called in-process: ${fnMs.toFixed(5)} ms. Ratio: the warm call over the in-process call plus one round trip to the same server with the same caller.`,
    "CPU: ms of CPU time a call of the server's thread (node caller only; the Python caller's process is not this one) and of the worker process.",
    "",
    "| round | server | caller | warm call | one round trip | ratio | CPU, server | CPU, worker |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.round} | ${r.server} | ${r.caller} | ${ms(r.warm)} | ${ms(r.trip)} | ${ratio(r).toFixed(2)}× | ${ms(r.main, 3)} | ${ms(r.worker, 3)} |`),
    "",
    "| caller | minipod: ratio by round | floor: ratio by round |",
    "|---|---|---|",
    ...callers.map((c) => `| ${c} | ${summary("minipod", c)} | ${summary("floor", c)} |`),
    ...(pythonCallerWhyNot ? ["", `The Python caller: ${pythonCallerWhyNot}.`] : []),
    "",
  ].join("\n");
  process.stdout.write(report);
  writeKeeping(RESULTS, KEPT, report);
} finally {
  await nodeCaller.terminate();
  await floor.close();
  await emu.close();
}
