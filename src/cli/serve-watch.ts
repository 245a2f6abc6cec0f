import { createWriteStream, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, extname, join, relative, resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream } from "node:stream/web";
import type { Emulator } from "../compose/emulator.js";
import { loadConfigFile } from "../compose/config.js";
import { INLINE_PREFIX } from "../domain/handlers/types.js";
import { isModuleRef } from "../domain/handlers/load-module.js";
import { watchFiles } from "./file-watch.js";

/** Files whose edit reloads the handlers. */
const CODE = new Set([".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".json"]);
/** How long a config reload waits for the jobs in progress to finish on the code they started with. */
const DRAIN_MS = 30_000;

export interface ServeWatchOptions {
  /** The emulator serving now (it changes when the config is reloaded). */
  emulator: () => Emulator;
  /** The config file, absolute; undefined when none was read. */
  configFile: string | undefined;
  /**
   * Stops the emulator and starts it again on the same port with the config re-read, from
   * `importFile` (the state before) when given; resolves with the new one.
   */
  restart: (importFile: string | undefined) => Promise<Emulator>;
  /** Builds (and closes) an emulator of the config as it now reads, off to the side: throws what would stop its start. */
  check: () => Promise<void>;
  /** Whether the state lives in a --db file (it then needs no carrying over). */
  durable: boolean;
  log: (line: string) => void;
}

/** The module files the endpoints' handlers are, absolute. */
function handlerFiles(emulator: Emulator, baseDir: string): string[] {
  const refs = emulator.endpoints().map((e) => (typeof e.handler === "string" ? e.handler : ""));
  return [...new Set(refs.filter((r) => r !== "" && isModuleRef(r) && !r.startsWith(INLINE_PREFIX)).map((r) => resolve(baseDir, r)))];
}

async function inProgress(emulator: Emulator): Promise<number> {
  const res = await fetch(`${emulator.url}/_emulator/jobs?status=IN_PROGRESS&limit=1`, { headers: control(emulator) });
  return res.ok ? ((await res.json()) as { count: number }).count : 0;
}

const control = (emulator: Emulator): Record<string, string> => (emulator.config.controlKey ? { authorization: `Bearer ${emulator.config.controlKey}` } : {});

/**
 * `minipod --watch`: an edit of a handler module reloads the handlers (new jobs run the new code,
 * running ones finish on theirs); an edit of the config file, once it reads without error, waits
 * for the jobs in progress (at most 30 s), then restarts minipod on the same port with the new
 * config and the state it had (its jobs, journal, resources). Returns the function that stops it.
 */
export function watchServe(o: ServeWatchOptions): () => void {
  const baseDir = o.configFile ? dirname(o.configFile) : process.cwd();
  let stop = () => {};
  let queue = Promise.resolve();
  const arm = () => {
    stop();
    const paths = [...(o.configFile ? [o.configFile] : []), ...handlerFiles(o.emulator(), baseDir).map((f) => dirname(f))];
    stop = watchFiles(
      paths,
      (files) => {
        queue = queue.then(() => react(files)).catch((e: unknown) => o.log(`minipod --watch: ${(e as Error).message}`));
      },
      // The config, and code (a handler's own modules beside it): not logs or data written there.
      { accept: (file) => file === o.configFile || CODE.has(extname(file)) },
    );
  };
  const react = async (files: string[]) => {
    const names = files.map((f) => relative(process.cwd(), f) || f).join(", ");
    if (o.configFile && files.includes(o.configFile)) {
      try {
        loadConfigFile(o.configFile);
        await o.check();
      } catch (e) {
        o.log(`minipod --watch: ${names} changed, but it does not load; still serving the previous config:\n${(e as Error).message}`);
        return;
      }
      const emulator = o.emulator();
      const deadline = Date.now() + DRAIN_MS;
      let running = await inProgress(emulator);
      if (running > 0) o.log(`minipod --watch: ${names} changed: waiting for ${running} job(s) in progress to finish (at most ${DRAIN_MS / 1000} s)`);
      while (running > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        running = await inProgress(emulator);
      }
      let importFile: string | undefined;
      if (!o.durable) {
        const res = await fetch(`${emulator.url}/_emulator/export`, { headers: control(emulator) });
        if (!res.ok) throw new Error(`cannot keep the state over the reload (export answered ${res.status})`);
        importFile = join(mkdtempSync(join(tmpdir(), "minipod-watch-")), "state.sqlite");
        await pipeline(Readable.fromWeb(res.body as ReadableStream<Uint8Array>), createWriteStream(importFile));
      }
      let next: Emulator;
      try {
        next = await o.restart(importFile);
      } catch (e) {
        // It started a moment ago as a check: what failed now (the port taken?) leaves nothing serving.
        o.log(`minipod --watch: the restart failed, and minipod stops: ${(e as Error).message}`);
        process.exit(2);
      }
      o.log(`minipod --watch: ${names} changed: config reloaded, ${next.endpoints().length} endpoint(s) on ${next.url}`);
      arm();
      return;
    }
    const { reloaded, failed } = await o.emulator().reloadHandlers();
    for (const f of failed) o.log(`minipod --watch: handler ${f.handler} does not load; its previous code still runs: ${f.error}`);
    if (reloaded.length > 0) o.log(`minipod --watch: ${names} changed: handlers reloaded (${reloaded.join(", ")}); jobs running finish on their previous code`);
  };
  arm();
  return () => stop();
}
