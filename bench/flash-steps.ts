/**
 * Where the time of a warm Flash call goes, step by step, as bench/flash-warm.ts makes the call
 * (a FunctionRequest on an endpoint of the runpod/flash-cpu image, POST /runsync from a caller in
 * a worker thread, minipod's Flash worker process): each step timed in minipod's process from
 * the moment node hands over a request, the end of its body and the `writev` of an answer
 * (bench/lib/step-marks.ts). Prints the median of each step, and the CPU time a call of minipod's
 * main thread (from /proc, Linux); writes nothing.
 *
 *   MINIPOD_PYTHON=/path/to/venv/bin/python npx tsx bench/flash-steps.ts [--calls 1500]
 *
 * Keep --calls at 1,500 or under: /runsync allows 2,000 requests per 10 s on an endpoint, and
 * 400 calls warm minipod up first.
 */
import { existsSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import { StepMarks } from "./lib/step-marks.js";
import { createEmulator } from "../src/index.js";

const marks = new StepMarks();
const { values } = parseArgs({ options: { calls: { type: "string" } } });
const calls = Number(values.calls ?? 1500);
if (!process.env.MINIPOD_PYTHON) throw new Error("set MINIPOD_PYTHON to an interpreter with cloudpickle");
const headers = { authorization: "Bearer bench", "content-type": "application/json" };
const CODE = "def add(a, b):\n    return {'sum': a + b}\n";

const CALLER = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", async ({ url, headers, bodies }) => {
  const times = [];
  try {
    for (const body of bodies) {
      const t = performance.now();
      const res = await fetch(url, { method: "POST", headers, body });
      const text = await res.text();
      times.push(performance.now() - t);
      if (res.status !== 200 || !text.includes('"COMPLETED"')) throw new Error(res.status + " " + text);
    }
    parentPort.postMessage({ times });
  } catch (e) {
    parentPort.postMessage({ error: String(e) });
  }
});`;
const caller = new Worker(CALLER, { eval: true });
const call = (url: string, bodies: string[]) =>
  new Promise<number[]>((resolve, reject) => {
    caller.once("message", (m: { times?: number[]; error?: string }) => (m.error ? reject(new Error(m.error)) : resolve(m.times!)));
    caller.postMessage({ url, headers, bodies });
  });
const flashCalls = (n: number) =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ input: { function_name: "add", function_code: CODE, args: [i, 1], kwargs: {}, serialization_format: "json", execution_type: "function" } }));
// The CPU time of minipod's main thread, in ms (Linux; 0 elsewhere).
const STAT = `/proc/${process.pid}/task/${process.pid}/stat`;
const cpuMs = () => (existsSync(STAT) ? readFileSync(STAT, "utf8").split(") ")[1]!.split(" ").slice(11, 13).reduce((a, b) => a + Number(b), 0) * 10 : 0);

const emu = await createEmulator({ clock: "real", log: () => {} });
try {
  const saved = (await fetch(`${emu.url}/graphql`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      query: "mutation($input: EndpointInput) { saveEndpoint(input: $input) { id } }",
      variables: { input: { name: "steps", workersMax: 1, idleTimeout: 3600, instanceIds: ["cpu3c-1-2"], template: { name: "steps", imageName: "runpod/flash-cpu:py3.12-latest" } } },
    }),
  }).then((r) => r.json())) as { data: { saveEndpoint: { id: string } } };
  const url = `${emu.url}/v2/${saved.data.saveEndpoint.id}/runsync`;
  // Node's compiler optimises what a call runs over the first few hundred calls.
  await call(url, flashCalls(400));
  const cpu0 = cpuMs();
  marks.start();
  const times = await call(url, flashCalls(calls));
  marks.stop();
  const cpu = (cpuMs() - cpu0) / calls;
  const median = [...times].sort((a, b) => a - b)[times.length >> 1]!;
  console.log(`${calls} warm calls, load average ${loadavg()[0]!.toFixed(2)}: median ${median.toFixed(2)} ms a call, minipod's main thread ${cpu.toFixed(3)} ms of CPU a call`);
  console.log("| step of one warm call | ms (median) | calls |\n|---|---|---|");
  for (const [step, ms, n] of marks.medians()) console.log(`| ${step} | ${ms.toFixed(2)} | ${n} |`);
} finally {
  await caller.terminate();
  await emu.close();
}
