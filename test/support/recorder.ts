import { mkdirSync, writeFileSync } from "node:fs";
import { Agent, type Server } from "node:http";
import { join } from "node:path";
import { toRecording } from "./recorded-order.js";
import { relayTap } from "./relay-tap.js";
import { RECORDED_DIR, RECORDING, type Raw, type Recording } from "./recording.js";
import type { WorkerTap } from "./worker-tap.js";

/**
 * The recorder of real clients' exchanges with minipod (`npm run contracts:record`, which sets
 * MINIPOD_RECORD=1). It sits at minipod's door, in the test harness, as a small HTTP relay: a test
 * points its real client (and its own requests) at `url`, the relay passes every request on to
 * minipod unchanged and its answer back unchanged, and keeps what each side sent. The clients are
 * not touched. At `close()` each scenario is written to test/contract/recorded/<scenario>.json:
 * the requests (method, path and query with ids abstracted, the headers that matter, the body), and
 * what was answered (status, content type, the answer's fields and their types), in the order they
 * were sent. test/contract/recorded.test.ts replays them against a fresh minipod in every run.
 *
 * Without MINIPOD_RECORD nothing is relayed: `url` is minipod's own.
 */


interface ScenarioOptions {
  /** The endpoints whose queue and worker requests belong to it (others are left out); default all. Other routes (control, GraphQL, REST) always do. */
  endpoints?: string[];
  about: string;
  /** Keep an idle worker's heartbeats and empty polls (once each), else they are left out. */
  idle?: boolean;
  /**
   * The client polls several GETs while it waits (runpod-flash: the job's status, the endpoint's
   * metrics, the worker's log), as often and in the order its timing gives: between two of its
   * other requests, each such GET (a stream's reads too) is kept once, where first sent, after the
   * worker's result (placed right after the take that brought its job), with what its answers gave
   * together, every list but a stream's as a list of anything (which workers are ready, which lines
   * are logged, depends on timing and on worker processes a replay has not).
   */
  polls?: boolean;
  /** The worker HTTP server whose requests from minipod, from its start to this scenario's end, belong to it (`worker`). */
  worker?: WorkerTap;
}

export class Recorder {
  private server: Server | undefined;
  private readonly agent = new Agent({ keepAlive: true });
  private current: { name: string; o: ScenarioOptions; raws: Raw[] } | undefined;
  private readonly scenarios: Array<{ name: string; o: ScenarioOptions; raws: Raw[] }> = [];
  url: string;

  constructor(
    private readonly target: string,
    private readonly meta: { client: string; test: string; clock: string; config: unknown },
  ) {
    this.url = target;
  }

  async start(): Promise<this> {
    if (!RECORDING) return this;
    // An exchange belongs to the scenario under way when it is answered: a poll held since
    // before (a job-take waiting for work) belongs to the scenario whose /run it was given.
    const tap = await relayTap(
      this.target,
      (raw) => {
        const scenario = this.current;
        const endpoint = /^\/v2\/([^/]+)\//.exec(raw.path)?.[1];
        if (scenario && (!scenario.o.endpoints || endpoint === undefined || scenario.o.endpoints.includes(endpoint))) scenario.raws.push(raw);
      },
      this.agent,
    );
    this.server = tap.server;
    this.url = tap.url;
    return this;
  }

  /** From now on, what is sent belongs to scenario `name` (until the next call or `pause()`); a name used before goes on with it. */
  scenario(name: string, o: ScenarioOptions): void {
    this.current?.o.worker?.freeze();
    // The same name again goes on with the same scenario (after a pause).
    this.current = this.scenarios.find((x) => x.name === name) ?? { name, o, raws: [] };
    if (!this.scenarios.includes(this.current)) this.scenarios.push(this.current);
  }

  /** How many exchanges of the scenario under way were answered with `status` on a path matching `path`. */
  seen(path: RegExp, status: number): number {
    return this.current?.raws.filter((r) => path.test(r.path) && r.status === status).length ?? 0;
  }

  /** What is sent from now on belongs to no scenario. */
  pause(): void {
    this.current?.o.worker?.freeze();
    this.current = undefined;
  }

  /** Stops relaying and, when recording, writes each scenario's file. */
  async close(): Promise<void> {
    this.current?.o.worker?.freeze();
    this.current = undefined;
    relays.delete(this.target);
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.agent.destroy();
    mkdirSync(RECORDED_DIR, { recursive: true });
    for (const s of this.scenarios) {
      const keys = (this.meta.config as { auth?: { keys?: Array<{ key: string }> } }).auth?.keys?.map((k) => k.key);
      const recording = toRecording(s.raws, s.o, keys);
      const file: Recording = { client: this.meta.client, test: this.meta.test, scenario: s.name, about: s.o.about, clock: this.meta.clock, config: this.meta.config, ...recording };
      if (s.o.worker) file.worker = s.o.worker.exchanges();
      writeFileSync(join(RECORDED_DIR, `${s.name}.json`), JSON.stringify(file, null, 2) + "\n");
    }
  }
}

const relays = new Map<string, string>();

/** A recorder relaying to `target` (minipod's URL), started; a no-op one (url = target) unless recording. */
export async function recorder(target: string, meta: { client: string; test: string; clock: string; config: unknown }): Promise<Recorder> {
  const r = await new Recorder(target, meta).start();
  relays.set(target, r.url);
  return r;
}

/** The URL to reach minipod at `url` by: its recorder's while one relays to it, else itself. */
export function via(url: string): string {
  return relays.get(url) ?? url;
}

