import type { Server } from "node:http";
import { relayTap } from "./relay-tap.js";
import { RECORDING } from "./recording.js";
import { parse, values, type Raw, type RecordedWorkerExchange } from "./recording.js";

/** A worker's answer headers that say nothing of it (the connection's, the time). */
const TRANSPORT_HEADERS = new Set(["date", "connection", "keep-alive", "transfer-encoding", "content-length"]);

/**
 * A relay in front of a worker HTTP server of the test's (a load-balancing endpoint's worker, given
 * to minipod by URL): minipod is given `url`, and when recording, each request minipod sends it and
 * the worker's answer are kept, until the scenario it belongs to (ScenarioOptions.worker) ends.
 * Without MINIPOD_RECORD, `url` is the worker's own.
 */
export class WorkerTap {
  private server: Server | undefined;
  private readonly raws: Raw[] = [];
  private frozen = false;
  url: string;

  constructor(private readonly target: string) {
    this.url = target;
  }

  async start(): Promise<this> {
    if (!RECORDING) return this;
    const tap = await relayTap(this.target, (raw) => {
      if (!this.frozen) this.raws.push(raw);
    });
    this.server = tap.server;
    this.url = tap.url;
    return this;
  }

  /** What minipod sends the worker from now on belongs to no scenario. */
  freeze(): void {
    this.frozen = true;
  }

  /** The distinct requests minipod sent (a health check sent again is kept once), in the order first sent, with the worker's answers. */
  exchanges(): RecordedWorkerExchange[] {
    const out = new Map<string, RecordedWorkerExchange>();
    for (const r of [...this.raws].sort((a, b) => a.seq - b.seq)) {
      const request: RecordedWorkerExchange["request"] = { method: r.method, path: r.path };
      if ([...r.query.keys()].length) request.query = Object.fromEntries([...r.query.entries()].sort());
      if (r.body.length) request.body = values(parse(r.body, undefined));
      const key = JSON.stringify([request.method, request.path, request.query]);
      if (out.has(key)) continue;
      const headers = Object.fromEntries(
        Object.entries(r.answerHeaders ?? {})
          .filter(([k]) => !TRANSPORT_HEADERS.has(k))
          .map(([k, v]) => [k, String(v)])
          .sort(),
      );
      const response: RecordedWorkerExchange["response"] = { status: r.status ?? 0 };
      if (Object.keys(headers).length) response.headers = headers;
      const body = parse(r.answer, r.contentType);
      if (body !== undefined) response.body = values(body);
      out.set(key, { request, response });
    }
    return [...out.values()];
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

/** A tap in front of the worker HTTP server at `target`, started; a no-op one (url = target) unless recording. */
export async function workerTap(target: string): Promise<WorkerTap> {
  return new WorkerTap(target).start();
}
