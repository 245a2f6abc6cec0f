/**
 * minipod's own work for a warm call to a worker process, without sockets: the route table is
 * handed node-like requests and answers of this script's making (no HTTP parsing, no kernel), for
 * the three requests of a warm call as a Flash worker makes them: the `/runsync`, the answer of
 * the worker's held job-take, its job-done (the path form, `?gpu=minipod&isStream=false`). Prints
 * the CPU time a call. Rate limits are off (the calls come faster than /runsync allows).
 *
 *   npx tsx bench/flash-inprocess.ts [--calls 3000]
 */
import { EventEmitter } from "node:events";
import { Readable } from "node:stream";
import { parseArgs } from "node:util";
import { buildEmulator } from "../src/compose/emulator.js";

const { values } = parseArgs({ options: { calls: { type: "string" } } });
const calls = Number(values.calls ?? 3000);
const { core, app } = await buildEmulator({ clock: "real", config: { rateLimits: { enabled: false }, endpoints: [{ id: "ext", handler: "external" }] }, log: () => {} });

/** Hands the route table a request; settles with the text of its answer. */
function exchange(method: string, url: string, body: string | undefined): Promise<string> {
  const headers = { host: "127.0.0.1:1234", authorization: "Bearer k", "content-type": "application/json" };
  const req = Object.assign(Readable.from(body === undefined ? [] : [Buffer.from(body)]), { method, url, headers });
  let wrote!: (text: string) => void;
  const sent = new Promise<string>((resolve) => (wrote = resolve));
  const res = Object.assign(new EventEmitter(), { writableFinished: false, writeHead: () => {}, end: (text = "") => wrote(text) });
  if (!app.table.take(req as never, res as never)) throw new Error(`${method} ${url} was not taken by a fast entry`);
  return sent;
}

const CODE = "def add(a, b):\n    return {'sum': a + b}\n";
const input = (i: number) => JSON.stringify({ input: { function_name: "add", function_code: CODE, args: [i, 1], kwargs: {}, serialization_format: "json", execution_type: "function" } });
const TAKE = "/v2/ext/job-take/w1?gpu=minipod&job_in_progress=0";
let take = exchange("GET", TAKE, undefined);
const warmCall = async (i: number) => {
  const answer = exchange("POST", "/v2/ext/runsync", input(i));
  const job = JSON.parse(await take) as { id: string };
  const result = JSON.stringify({ output: { success: true, json_result: { sum: i + 1 }, stdout: "" } });
  await exchange("POST", `/v2/ext/job-done/w1/${job.id}?gpu=minipod&isStream=false`, result);
  take = exchange("GET", TAKE, undefined);
  await answer;
};

try {
  for (let i = 0; i < 300; i++) await warmCall(i);
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) await warmCall(i);
  const used = process.cpuUsage(before);
  console.log(`${calls} warm calls in process: ${((used.user + used.system) / 1000 / calls).toFixed(3)} ms of CPU a call`);
} finally {
  core.close();
}
