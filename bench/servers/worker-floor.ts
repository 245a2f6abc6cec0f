/**
 * The floor of a warm call through a worker process: the least any server can do to hand a call
 * to a worker process and its result back. A bare node:http server (no framework, no checks, no
 * store, no journal) with four routes: `POST /v2/floor/runsync` queues the body's `input` as a job
 * and answers when its result comes back; `GET /v2/floor/job-take/{worker}` hands out a queued job
 * or is held until one comes; `POST /v2/floor/job-done/{worker}/{job}` completes the job waiting on
 * it and is acknowledged right after; `GET /v2/floor/health` answers a fixed JSON, as a round trip.
 * The worker is minipod's own Flash worker (`python -m minipod.runtimes.flash`, its job loop with
 * the result and the next job-take in one write), as minipod starts it: only the server differs.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

const JSON_TYPE = { "content-type": "application/json" };
const HEALTH = JSON.stringify({ jobs: { completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 }, workers: { idle: 1, running: 0 } });

export interface WorkerFloor {
  /** The server's base URL. */
  url: string;
  /** The worker process's pid (its CPU time is read from /proc). */
  workerPid: number;
  close(): Promise<void>;
}

const bodyOf = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });

/** Starts the floor server on 127.0.0.1 and its worker process (`python` with minipod's package on `pythonPath`). */
export async function startWorkerFloor(python: string, pythonPath: string): Promise<WorkerFloor> {
  const queued: string[] = [];
  const waiting = new Map<string, ServerResponse>();
  let held: ServerResponse | undefined;
  let count = 0;
  const answer = (res: ServerResponse, text: string) => {
    res.writeHead(200, JSON_TYPE);
    res.end(text);
  };
  const server = createServer((req, res) => {
    void bodyOf(req).then((text) => {
      const path = req.url!.split("?")[0]!;
      const parts = path.split("/");
      if (req.method === "GET" && path === "/v2/floor/health") return answer(res, HEALTH);
      if (req.method === "POST" && path === "/v2/floor/runsync") {
        const id = `floor-${++count}`;
        waiting.set(id, res);
        const job = JSON.stringify({ id, input: (JSON.parse(text) as { input: unknown }).input });
        if (held === undefined) return void queued.push(job);
        const take = held;
        held = undefined;
        return answer(take, job);
      }
      if (req.method === "GET" && parts[3] === "job-take") {
        const job = queued.shift();
        if (job === undefined) return void (held = res);
        return answer(res, job);
      }
      if (req.method === "POST" && parts[3] === "job-done") {
        const id = parts[5]!;
        const caller = waiting.get(id);
        waiting.delete(id);
        const output = (JSON.parse(text) as { output?: unknown }).output;
        if (caller) answer(caller, JSON.stringify({ id, status: "COMPLETED", output }));
        // Acknowledged after the answer its result completes, as minipod does.
        return void process.nextTick(() => answer(res, JSON.stringify({ id, status: "COMPLETED" })));
      }
      res.writeHead(404);
      res.end();
    });
  });
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const worker: ChildProcess = spawn(python, ["-m", "minipod.runtimes.flash"], {
    stdio: ["ignore", "inherit", "inherit"],
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      PYTHONPATH: pythonPath,
      RUNPOD_POD_ID: "floor-worker",
      RUNPOD_WEBHOOK_GET_JOB: `${url}/v2/floor/job-take/$ID`,
      RUNPOD_WEBHOOK_POST_OUTPUT: `${url}/v2/floor/job-done/$RUNPOD_POD_ID/$ID`,
      MINIPOD_WORKER_PIPELINING: "1",
    },
  });
  return {
    url,
    workerPid: worker.pid!,
    close: async () => {
      worker.kill("SIGKILL");
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
