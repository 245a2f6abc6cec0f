/**
 * What the warm-call benches of Flash functions share (flash-warm.ts, flash-floor.ts): the caller
 * in a worker thread of its own, and the results file whose part after a KEPT line stays.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { Worker } from "node:worker_threads";

/** A worker thread making the calls it is sent one after another with node's fetch, answering their wall times (ms). */
const CALLER = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", async ({ url, method, headers, bodies, check }) => {
  const times = [];
  try {
    for (const body of bodies) {
      const t = performance.now();
      // A call that hangs (a worker that never took its job) fails the bench rather than stalling it.
      const res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(30000) });
      const text = await res.text();
      times.push(performance.now() - t);
      if (res.status !== 200 || (check && !text.includes('"COMPLETED"'))) throw new Error(res.status + " " + text);
    }
    parentPort.postMessage({ times });
  } catch (e) {
    parentPort.postMessage({ error: String(e) });
  }
});`;

export interface FetchCaller {
  /** The wall times (ms) of `bodies` sent one after another (a GET: bodies of undefined); `check`: each answer says COMPLETED. */
  call(url: string, method: string, bodies: (string | undefined)[], check: boolean): Promise<number[]>;
  terminate(): Promise<number>;
}

/** A caller on an event loop of its own (a worker thread), as a user's SDK calls from a process of its own. */
export function fetchCaller(headers: Record<string, string>): FetchCaller {
  const thread = new Worker(CALLER, { eval: true });
  return {
    call: (url, method, bodies, check) =>
      new Promise<number[]>((resolve, reject) => {
        thread.once("message", (m: { times?: number[]; error?: string }) => (m.error ? reject(new Error(m.error)) : resolve(m.times!)));
        thread.postMessage({ url, method, headers, bodies, check });
      }),
    terminate: () => thread.terminate(),
  };
}

/** Writes `report` to `file`, followed by what followed the `kept` line there (the line itself when there was none). */
export function writeKeeping(file: URL, kept: string, report: string): void {
  const previous = existsSync(file) ? readFileSync(file, "utf8") : "";
  const after = previous.includes(kept) ? previous.slice(previous.indexOf(kept)) : `${kept}\n`;
  writeFileSync(file, `${report}\n${after}`);
}
