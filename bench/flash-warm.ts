/**
 * A warm call of a Flash function through minipod, beside the same function called in-process
 * plus one HTTP round trip to minipod. The function is runpod-flash's FunctionRequest as it sends
 * it (source, JSON arguments), on an endpoint of the runpod/flash-cpu image, so it runs in a worker
 * process of minipod's Flash runtime (its own job loop); once that worker is warm, each call is one
 * POST /runsync. For comparison, in the same run, the same handler under the service's worker
 * runtime (runpod 1.12 `runpod.serverless.start`, concurrency 3 with calls kept one at a time, as
 * minipod's Flash worker ran before it had a job loop of its own), on an image of the bench's own.
 *
 * The caller runs in a worker thread, on an event loop of its own, as a user's SDK calls from a
 * process of its own: minipod's event loop serves the requests and nothing else. The same calls
 * made from minipod's own event loop (as this bench made them before) are measured too. On Linux,
 * the CPU time of minipod's main thread and of the worker process per call is read from /proc:
 * unlike wall time, it hardly moves when other processes load the machine.
 * Last, what a Flash user sees: the service's own Flash client (runpod-flash, when the
 * interpreter can import it; one line says why not otherwise) awaiting an `@Endpoint` function in a
 * loop, in a process of its own, beside one round trip from Python with the HTTP library it sends
 * with (`requests`) and the same request posted to /runsync with that library alone.
 * Prints a table and writes it to bench/RESULTS-flash.md (what follows the KEPT line there stays).
 *
 *   MINIPOD_PYTHON=/path/to/venv/bin/python PYTHONPATH=$MINIPOD_CLIENTS/runpod-python npx tsx bench/flash-warm.ts [--calls 200]
 *
 * The interpreter must have cloudpickle, and runpod for the comparison (scripts/python-venv.sh
 * makes one). Keep --calls under 700: /runsync allows 2,000 requests per 10 s on an endpoint (500 calls warm it up first).
 */
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { fetchCaller, writeKeeping } from "./lib/flash-bench.js";
import { createEmulator } from "../src/index.js";

const { values } = parseArgs({ options: { calls: { type: "string" } } });
const calls = Number(values.calls ?? 200);
const python = process.env.MINIPOD_PYTHON;
if (!python) throw new Error("set MINIPOD_PYTHON to an interpreter with cloudpickle and runpod");
const headers = { authorization: "Bearer bench", "content-type": "application/json" };
const CODE = "def add(a, b):\n    return {'sum': a + b}\n";
const RESULTS = new URL("./RESULTS-flash.md", import.meta.url);
const KEPT = "<!-- KEPT: what follows is kept when bench/flash-warm.ts writes this file again -->";

// The same handler under the service's worker runtime, as minipod's Flash worker ran it before.
const UNDER_RUNPOD = [
  "import asyncio, runpod.serverless",
  "from minipod.runtimes.flash import handler",
  "lock = None",
  "async def serial(job):",
  "    global lock",
  "    lock = lock or asyncio.Lock()",
  "    async with lock:",
  "        return await handler(job)",
  "runpod.serverless.start({'handler': serial, 'concurrency_modifier': lambda current: 3})",
].join("\n");
const packageDir = fileURLToPath(new URL("../python/src", import.meta.url));
const images = [
  {
    image: "bench/flash-under-runpod",
    command: [python, "-c", UNDER_RUNPOD],
    env: { PYTHONPATH: [packageDir, process.env.PYTHONPATH].filter(Boolean).join(":"), RUNPOD_LOG_LEVEL: "INFO" },
  },
];

/**
 * What a Flash user sees: the service's own client (runpod-flash, `FLASH_IS_LIVE_PROVISIONING`,
 * pointed at minipod by its URL variables) awaiting an `@Endpoint` function in a loop, in a
 * process of its own; beside it, one round trip from Python with the HTTP library that client
 * sends its calls with (runpod's `RunPodClient`: a `requests` session), `GET /health`. Prints
 * one JSON line: the first call, the warm calls and the round trips (ms).
 */
const FLASH_CLIENT = `
import asyncio, json, os, sys, time
import requests
from runpod_flash import CpuInstanceType, Endpoint

@Endpoint(name="bench-flash-client", cpu=CpuInstanceType.CPU3C_1_2)
def add(a, b):
    return {"sum": a + b}

async def calls(n):
    t = time.perf_counter()
    assert await add(0, 1) == {"sum": 1}
    cold = (time.perf_counter() - t) * 1000
    for i in range(10):
        await add(i, 1)
    times = []
    for i in range(n):
        t = time.perf_counter()
        result = await add(i, 1)
        times.append((time.perf_counter() - t) * 1000)
        assert result == {"sum": i + 1}, result
    return cold, times

def timed(n, send):
    times = []
    for i in range(n + 10):
        t = time.perf_counter()
        send(i)
        times.append((time.perf_counter() - t) * 1000)
    return times[10:]

n = int(sys.argv[2])
if sys.argv[1] == "flash":
    cold, times = asyncio.run(calls(n))
    from runpod_flash.core.resources.resource_manager import ResourceManager
    saved = [r.id for r in ResourceManager().list_all_resources().values() if "bench-flash-client" in (r.name or "")]
    print(json.dumps({"cold": cold, "times": times, "endpoint": saved[0]}))
    sys.exit(0)
session = requests.Session()
base = os.environ["RUNPOD_ENDPOINT_BASE_URL"]
headers = {"Authorization": "Bearer " + os.environ["RUNPOD_API_KEY"], "Content-Type": "application/json"}
trips = timed(n, lambda i: session.get(base + "/echo/health", headers=headers, timeout=10).json())
# The same call without runpod-flash's own work: the FunctionRequest it sends, posted with the same library.
code = "def add(a, b):\\n    return {'sum': a + b}\\n"
def post(i):
    body = {"input": {"function_name": "add", "function_code": code, "args": [i, 1], "kwargs": {}, "serialization_format": "json", "execution_type": "function"}}
    answer = session.post(base + "/" + sys.argv[3] + "/runsync", json=body, headers=headers, timeout=10).json()
    assert answer["status"] == "COMPLETED", answer
print(json.dumps({"trips": trips, "plain": timed(n, post)}))
`;
/** Calls to minipod's own endpoints before they are measured. */
const WARM_UP = 500;
/** At most this many calls with the Flash client, each a few hundred ms (see RESULTS-flash.md). */
const FLASH_CALLS = 50;
/** The Flash client's calls and round trips, or why they were not measured (one line). */
async function flashClient(url: string, n: number): Promise<{ cold: number; times: number[]; trips: number[]; plain: number[] } | string> {
  const check = spawnSync(python!, ["-c", "import runpod_flash, requests"], { encoding: "utf8" });
  if (check.status !== 0) return `skipped: ${python} cannot import runpod_flash (${(check.stderr || String(check.error)).trim().split("\n").slice(-1)[0]})`;
  const dir = mkdtempSync(join(tmpdir(), "minipod-bench-flash-"));
  try {
    writeFileSync(join(dir, "calls.py"), FLASH_CLIENT);
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      PYTHONDONTWRITEBYTECODE: "1",
      RUNPOD_API_KEY: "bench",
      FLASH_IS_LIVE_PROVISIONING: "true",
      RUNPOD_API_BASE_URL: url,
      RUNPOD_ENDPOINT_BASE_URL: `${url}/v2`,
      RUNPOD_REST_API_URL: `${url}/v1`,
      RUNPOD_HAPI_URL: url,
      RUNPOD_CONSOLE_URL: url,
    };
    const run = async <T>(...args: string[]) => {
      const out = await new Promise<string>((resolve, reject) =>
        execFile(python!, ["calls.py", ...args], { cwd: dir, env, timeout: 300_000, maxBuffer: 1 << 24 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
      );
      return JSON.parse(out.trim().split("\n").pop()!) as T;
    };
    // With the id of the endpoint runpod-flash saved, as its resource manager keeps it.
    const { endpoint, ...flash } = await run<{ cold: number; times: number[]; endpoint: string }>("flash", String(Math.min(n, FLASH_CALLS)));
    return { ...flash, ...(await run<{ trips: number[]; plain: number[] }>("http", String(n), endpoint)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const caller = fetchCaller(headers);
const viaCaller = caller.call;
/** The same calls from minipod's own event loop. */
const inLoop = async (url: string, method: string, bodies: (string | undefined)[], check: boolean) => {
  const times: number[] = [];
  for (const body of bodies) {
    const t = performance.now();
    const res = await fetch(url, { method, headers, body });
    const text = await res.text();
    times.push(performance.now() - t);
    if (res.status !== 200 || (check && !text.includes('"COMPLETED"'))) throw new Error(`${res.status} ${text}`);
  }
  return times;
};

// CPU time from /proc (Linux): minipod's main thread, and a worker process, in ms.
const TICK_MS = existsSync("/proc/self/stat") ? 1000 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim() || 100) : 0;
const cpuMs = (statPath: string): number | undefined => {
  if (!TICK_MS || !statPath || !existsSync(statPath)) return undefined;
  const fields = readFileSync(statPath, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
};
const MAIN = `/proc/${process.pid}/task/${process.pid}/stat`;
/** The stat file of minipod's worker process whose command line names `pattern`. */
const workerStat = (pattern: string): string => {
  const found = spawnSync("pgrep", ["-P", String(process.pid), "-f", pattern], { encoding: "utf8" });
  const pid = found.stdout?.trim().split("\n")[0];
  return pid ? `/proc/${pid}/stat` : "";
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!;
interface Measured {
  times: number[];
  /** CPU ms a call of minipod's main thread, and of the worker process. */
  main?: number | undefined;
  worker?: number | undefined;
}
const perCall = (before: number | undefined, after: number | undefined, n: number) => (before === undefined || after === undefined ? undefined : (after - before) / n);

const emu = await createEmulator({ clock: "real", log: () => {}, config: { images, endpoints: [{ id: "echo", handler: "echo", workersMin: 1, coldStartMs: 0 }] } });
try {
  const endpoint = async (name: string, imageName: string) => {
    const saved = await fetch(`${emu.url}/graphql`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        query: "mutation($input: EndpointInput) { saveEndpoint(input: $input) { id } }",
        // idleTimeout: the worker stays up between the measurements.
        variables: { input: { name, workersMax: 1, idleTimeout: 3600, instanceIds: ["cpu3c-1-2"], template: { name, imageName } } },
      }),
    }).then((r) => r.json() as Promise<{ data: { saveEndpoint: { id: string } } }>);
    return saved.data.saveEndpoint.id;
  };
  const flashCalls = (n: number) =>
    Array.from({ length: n }, (_, i) =>
      JSON.stringify({ input: { function_name: "add", function_code: CODE, args: [i, 1], kwargs: {}, serialization_format: "json", execution_type: "function" } }),
    );
  const measure = async (how: typeof viaCaller, url: string, method: string, bodies: (string | undefined)[], check: boolean, worker = ""): Promise<Measured> => {
    const [main0, worker0] = [cpuMs(MAIN), cpuMs(worker)];
    const times = await how(url, method, bodies, check);
    return { times, main: perCall(main0, cpuMs(MAIN), bodies.length), worker: perCall(worker0, cpuMs(worker), bodies.length) };
  };
  /** The cold call, then warm-up, then `calls` warm calls of the endpoint: [cold ms, warm]. */
  const warmCalls = async (id: string, pattern: string, warmUp: number): Promise<[number, Measured, string]> => {
    const url = `${emu.url}/v2/${id}/runsync`;
    const [coldMs] = await viaCaller(url, "POST", flashCalls(1), true);
    await viaCaller(url, "POST", flashCalls(warmUp), true);
    const stat = workerStat(pattern);
    return [coldMs!, await measure(viaCaller, url, "POST", flashCalls(calls), true, stat), stat];
  };
  const mine = await endpoint("bench", "runpod/flash-cpu:py3.12-latest");
  // 500 calls first: node's compiler optimises what a call runs over the first few hundred.
  await viaCaller(`${emu.url}/v2/${mine}/health`, "GET", Array<undefined>(WARM_UP).fill(undefined), false);
  const [coldMs, warm, stat] = await warmCalls(mine, "minipod.runtimes.flash", WARM_UP);
  // The same calls from minipod's own event loop, as this bench measured them before.
  const warmInLoop = await measure(inLoop, `${emu.url}/v2/${mine}/runsync`, "POST", flashCalls(calls), true, stat);
  const [coldBeforeMs, before] = await warmCalls(await endpoint("bench-runpod", "bench/flash-under-runpod"), "runpod.serverless.start", 10);
  // The floor of minipod's queue: the same request on an endpoint whose handler runs in minipod's process.
  const echoBody = JSON.stringify({ input: { function_name: "add", args: [1, 1] } });
  const echoUrl = `${emu.url}/v2/echo/runsync`;
  await viaCaller(echoUrl, "POST", Array<string>(WARM_UP).fill(echoBody), true);
  const echo = await measure(viaCaller, echoUrl, "POST", Array<string>(calls).fill(echoBody), true);
  // The baseline: one HTTP round trip to the same server, and the function called in the interpreter.
  const healthUrl = `${emu.url}/v2/${mine}/health`;
  const trip = await measure(viaCaller, healthUrl, "GET", Array<undefined>(calls).fill(undefined), false);
  const echoInLoop = await measure(inLoop, echoUrl, "POST", Array<string>(calls).fill(echoBody), true);
  const tripInLoop = await measure(inLoop, healthUrl, "GET", Array<undefined>(calls).fill(undefined), false);

  // The service's Flash client as the caller, last: its endpoint's worker process is another.
  const flash = await flashClient(emu.url, calls).catch((e: unknown) => `failed: ${String(e).split("\n").slice(-3).join(" ")}`);

  const inProcess = spawnSync(python, ["-c", `import timeit\n${CODE}\nn=100000\nprint(timeit.timeit(lambda: add(2, 1), number=n) / n * 1000)`], { encoding: "utf8" });
  const fnMs = Number(inProcess.stdout.trim());
  const ms = (x: number | undefined, digits = 2) => (x === undefined ? "" : x.toFixed(digits));
  const row = (what: string, m: Measured) => `| ${what} | ${ms(median(m.times))} | ${ms(p90(m.times))} | ${ms(m.main, 3)} | ${ms(m.worker, 3)} |`;
  const ratio = (w: Measured, t: Measured) => median(w.times) / (median(t.times) + fnMs);
  const report = [
    "# A warm Flash call through minipod",
    "",
    `\`npx tsx bench/flash-warm.ts --calls ${calls}\` on ${cpus().length} cores (load ${loadavg()[0]!.toFixed(2)}, ${loadavg()[1]!.toFixed(2)} over 5 minutes), ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC; ms.`,
    "CPU: ms of CPU time a call, of minipod's main thread and of the worker process (from /proc; the caller's own is not counted when it is a worker thread).",
    "",
    "| caller in a thread of its own | median | p90 | CPU, minipod | CPU, worker |",
    "|---|---|---|---|---|",
    row("warm call through minipod (POST /runsync, worker process of minipod.runtimes.flash, minipod's job loop)", warm),
    row("the same under the service's worker runtime (runpod 1.12 `runpod.serverless.start`), before", before),
    row("a call of minipod's in-process echo handler (POST /runsync, no worker process)", echo),
    row("one HTTP round trip to minipod (GET /health)", trip),
    `| the function called in-process | ${fnMs.toFixed(5)} | | | |`,
    "",
    "| caller on minipod's event loop (as measured before) | median | p90 | CPU, minipod and caller | CPU, worker |",
    "|---|---|---|---|---|",
    row("warm call through minipod", warmInLoop),
    row("a call of the echo handler", echoInLoop),
    row("one HTTP round trip (GET /health)", tripInLoop),
    "",
    `Ratio of the warm call to the in-process call plus one round trip: **${ratio(warm, trip).toFixed(2)}×** with the caller in a thread of its own, ` +
      `${ratio(warmInLoop, tripInLoop).toFixed(2)}× with the caller on minipod's event loop (minipod's target: within 2×); ` +
      `under the service's worker runtime, ${ratio(before, trip).toFixed(1)}×.`,
    `The first call (starting the worker process: Python, the job loop, cloudpickle) took ${coldMs.toFixed(0)} ms of wall time; ` +
      `${coldBeforeMs.toFixed(0)} ms under the service's worker runtime.`,
    "",
    ...(typeof flash === "string"
      ? [`The service's Flash client as the caller: ${flash}.`]
      : [
          "| the service's Flash client as the caller (runpod-flash, a process of its own) | median | p90 |",
          "|---|---|---|",
          `| warm call of an \`@Endpoint\` function, awaited in a loop (runpod-flash: cloudpickle, \`POST /run\`, then its polls of \`/status\`, \`/metrics\` and the worker's log until the job has ended) | ${ms(median(flash.times))} | ${ms(p90(flash.times))} |`,
          `| the same FunctionRequest posted to \`/runsync\` with a \`requests\` session (the library runpod-flash sends \`/run\` with), without runpod-flash's own work | ${ms(median(flash.plain))} | ${ms(p90(flash.plain))} |`,
          `| one HTTP round trip from Python with that library (\`requests\` session, GET /health) | ${ms(median(flash.trips))} | ${ms(p90(flash.trips))} |`,
          "",
          `Ratio to the in-process call plus that round trip: **${(median(flash.times) / (median(flash.trips) + fnMs)).toFixed(2)}×** for the Flash client's warm call, ` +
            `${(median(flash.plain) / (median(flash.trips) + fnMs)).toFixed(2)}× for its request posted by \`requests\` alone; ` +
            `its first call (the endpoint saved, the worker process started) took ${flash.cold.toFixed(0)} ms.`,
        ]),
    "",
  ].join("\n");
  process.stdout.write(report);
  writeKeeping(RESULTS, KEPT, report);
} finally {
  await caller.terminate();
  await emu.close();
}
