import { afterEach } from "vitest";
import { createEmulator, type Emulator, type EmulatorOptions } from "../../src/compose/emulator.js";
import { inProcess, type InProcess } from "./in-process.js";
import { fillLargeJobs } from "./large-jobs.js";

/** The scene of the snapshot tests: an endpoint with no worker (the jobs queued stay queued), and no REST quota. */
export const SNAPSHOT_CONFIG = { endpoints: [{ id: "q", handler: "echo", workersMin: 0, workersMax: 0 }], rateLimits: { enabled: false } };

/** Large jobs a test queues: their copy takes many turns of the event loop. */
export const SNAPSHOT_JOBS = 80;

/**
 * The emulators the tests of a describe make, with the scene's config unless told otherwise, in
 * process or with a server of their own. Each is closed after its test, once, whether the test
 * closed it itself or not.
 */
export function snapshotEmulators() {
  const open = new Set<() => unknown>();
  afterEach(async () => {
    for (const close of [...open]) await close();
  });
  const closedAfterTest = <T extends { close(): unknown }>(made: T): T => {
    const close = made.close.bind(made);
    const once = () => (open.delete(once) ? close() : undefined);
    open.add(once);
    return Object.assign(made, { close: once });
  };
  return {
    /** An emulator in process, its queue holding `jobs` large jobs. */
    async inProcess(jobs = 0, options: EmulatorOptions = {}): Promise<InProcess> {
      const e = closedAfterTest(await inProcess({ config: SNAPSHOT_CONFIG, ...options }));
      await fillLargeJobs(e.post, jobs);
      return e;
    },
    /** An emulator of `createEmulator` on the manual clock. */
    async emulator(options: EmulatorOptions = {}): Promise<Emulator> {
      return closedAfterTest(await createEmulator({ clock: "manual", config: SNAPSHOT_CONFIG, ...options }));
    },
  };
}
