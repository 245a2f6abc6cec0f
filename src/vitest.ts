/**
 * `minipod/vitest`: minipod in a vitest run. As a global setup (`test.globalSetup:
 * ["minipod/vitest"]`) it starts an emulator for each worker of the project before the tests, hands
 * their URLs to the tests through vitest's `provide`, and closes them after the run; in a test,
 * `minipodUrl()` is the URL of this worker's emulator (read with `inject`), so files that run at
 * once never share a queue. `minipodSetup(options)` makes a global setup with other options.
 */
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";
import type { TestProject } from "vitest/node";
import type { Emulator, EmulatorOptions } from "./compose/emulator.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The URLs of the emulators minipod/vitest started: one per worker of the project (see `minipodUrl`). */
    minipodUrls: string[];
  }
}

/** What `minipodSetup` takes: what `createEmulator` does (on a free port of 127.0.0.1), and how many to start. */
export interface MinipodSetupOptions extends Omit<EmulatorOptions, "port"> {
  /**
   * One emulator for each worker of the project (the default: test files that run at once do not
   * see each other's jobs, resets or clock), or, false, one for the whole run.
   */
  perWorker?: boolean;
}

/** The demo endpoints the package ships (what `npx minipod` serves with no config). */
const DEMO_CONFIG = fileURLToPath(new URL("../emulator.config.json", import.meta.url));

/** How many workers vitest runs the project's files in: `VITEST_POOL_ID` goes from 1 to that. */
function workersOf(project: TestProject): number {
  const set = project.config.maxWorkers || project.vitest.config.maxWorkers;
  if (set) return Math.max(1, Math.floor(set));
  const cores = availableParallelism();
  return Math.max(1, project.vitest.config.watch ? Math.floor(cores / 2) : cores - 1);
}

/**
 * A vitest global setup that starts the emulators: by default with the project's
 * `emulator.config.json` (else the demo endpoints) on the auto clock, whatever mode that file
 * sets, one per worker (`clock` or `config` given here decide otherwise). Use it from a setup file of
 * your own: `export default minipodSetup({ config: { endpoints: [...] } })`.
 */
export function minipodSetup(options: MinipodSetupOptions = {}): (project: TestProject) => Promise<() => Promise<void>> {
  return async (project) => {
    // Loaded here, in vitest's main process: a test that imports minipodUrl does not load the emulator.
    const { createEmulator } = await import("./compose/emulator.js");
    const { perWorker = true, ...emulatorOptions } = options;
    const own = join(project.config.root, "emulator.config.json");
    const config = emulatorOptions.config ?? (existsSync(own) ? own : DEMO_CONFIG);
    // A test runner's time skips: the file found (the project's, or the demo's "real" clock, made
    // for a person watching the dashboard) keeps its clock's speed and start, not its mode.
    const clock = emulatorOptions.clock ?? (emulatorOptions.config === undefined ? { mode: "auto" as const } : undefined);
    const count = perWorker ? workersOf(project) : 1;
    const started: Emulator[] = [];
    try {
      for (let i = 0; i < count; i++) started.push(await createEmulator({ ...emulatorOptions, config, ...(clock === undefined ? {} : { clock }) }));
    } catch (e) {
      await Promise.all(started.map((emu) => emu.close()));
      throw e;
    }
    project.provide("minipodUrls", started.map((emu) => emu.url));
    return async () => {
      await Promise.all(started.map((emu) => emu.close()));
    };
  };
}

/** The global setup with the defaults: `test.globalSetup: ["minipod/vitest"]`. */
export default minipodSetup();

/**
 * In a test: the URL of the emulator of the worker running it (`http://127.0.0.1:PORT`; the
 * queue API under `/v2`, the control API under `/_emulator`).
 */
export function minipodUrl(): string {
  const urls = inject("minipodUrls");
  if (!Array.isArray(urls) || urls.length === 0)
    throw new Error('no minipod in this test run: add "minipod/vitest" to test.globalSetup of the vitest config (or a setup file exporting minipodSetup(...))');
  const worker = Number(process.env.VITEST_POOL_ID ?? "1");
  return urls[(Number.isInteger(worker) && worker > 0 ? worker - 1 : 0) % urls.length]!;
}

/** The emulator's clock, for the client under test: see `minipodClock`. */
export interface ClientClock {
  /** Waits `ms` of virtual time (`POST /_emulator/clock/sleep`): at once on the auto clock while nothing runs on real time. */
  sleep(ms: number): Promise<void>;
  /** Virtual now, epoch ms (`GET /_emulator/clock`). */
  now(): Promise<number>;
}

/**
 * In a test: the emulator's clock as a client's `sleep` and `now` (of this worker's emulator, or
 * of the one at `url`), to give the client under test where it would wait in real time, so its
 * polling skips ahead with the jobs it polls: `new MyClient({ sleep: clock.sleep })`.
 */
export function minipodClock(url: string = minipodUrl()): ClientClock {
  const control = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}/_emulator/clock${path}`, { method, ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }) });
    if (!res.ok) throw new Error(`minipod's clock answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { now: number };
  };
  return {
    sleep: async (ms) => {
      await control("POST", "/sleep", { ms: Math.max(0, Math.round(ms)) });
    },
    now: async () => (await control("GET", "")).now,
  };
}
