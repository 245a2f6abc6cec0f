#!/usr/bin/env node
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { banner } from "./cli/banner.js";
import { parseCli, USAGE } from "./config/cli-args.js";
import { ConfigError } from "./config/load.js";
import { startEmulator } from "./compose/emulator.js";
import { exportCommand } from "./cli/export-command.js";
import { hubTestCommand } from "./cli/hub-test.js";
import { watchServe } from "./cli/serve-watch.js";
import { onStdinClose } from "./cli/stdin-close.js";
import { workerCommand } from "./cli/worker-command.js";
import { VERSION } from "./version.js";

/**
 * The config of the demo endpoints (`echo`, `scripted`, `text-gen`) that the package ships: what
 * minipod serves when there is no config to read, so that `npx minipod` in a new project, and the
 * README's examples, work at once. (The path is the same from `dist/minipod.js` and `src/cli.ts`.)
 */
const DEMO_CONFIG = fileURLToPath(new URL("../emulator.config.json", import.meta.url));

/** `minipod`: parse flags, start the emulator, print the banner, stop cleanly on a signal. */
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === "export") return exportCommand(argv.slice(1), process.env);
  if (argv[0] === "worker") process.exit(await workerCommand(argv.slice(1), process.env));
  if (argv[0] === "hub-test") process.exit(await hubTestCommand(argv.slice(1), process.env));
  const cli = parseCli(argv);
  if (cli.help) {
    process.stdout.write(USAGE + "\n");
    return;
  }
  if (cli.version) {
    process.stdout.write(VERSION + "\n");
    return;
  }
  // The worker processes of images read it when they start (see compose/image-launch.ts).
  if (cli.python) process.env.MINIPOD_PYTHON = cli.python;
  const demo = cli.config === undefined && existsSync(DEMO_CONFIG);
  const options = (importFile: string | undefined, port: number) => ({
    port,
    host: cli.host,
    ...(cli.allowedHosts ? { allowedHosts: cli.allowedHosts } : {}),
    tls: cli.tls,
    config: cli.config ?? (demo ? DEMO_CONFIG : {}),
    db: cli.db,
    importFile,
    // A flag overrides the config's clock; without one, the config's mode, else real (see startEmulator).
    ...(cli.clock || cli.speed ? { clock: { ...(cli.clock ? { mode: cli.clock } : {}), ...(cli.speed ? { speed: cli.speed } : {}) } } : {}),
    ...(cli.logLevel ? { logLevel: cli.logLevel } : {}),
    log: (line: string) => process.stderr.write(line + "\n"),
  });
  let emulator = await startEmulator(options(cli.importFile, cli.port), "real", { warm: true });
  // Handlers first: a signal that arrives before they exist kills the process at once, and a
  // client that saw the banner may send one straight away.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      process.stderr.write(`${signal} again: exiting without waiting\n`);
      process.exit(1);
    }
    stopping = true;
    process.stderr.write(`\n${signal}: stopping minipod (answers in flight finish; ${signal} again to exit at once)\n`);
    const force = setTimeout(() => process.exit(1), 5000);
    force.unref();
    void emulator.close().then(() => process.exit(0));
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  if (cli.exitOnStdinClose) onStdinClose(() => stop("stdin closed"));

  const specs = emulator.endpoints();
  process.stdout.write(
    banner(emulator, {
      version: VERSION,
      db: cli.db ?? ":memory: (state ends with the process; --db FILE keeps it)",
      configSource: cli.config ?? (demo ? `${DEMO_CONFIG}: the demo endpoints (no ./emulator.config.json here: write one, or pass --config FILE)` : "none (built-in defaults)"),
      endpoints: specs,
      recovered: emulator.recovered,
    }),
  );
  if (cli.watch) {
    watchServe({
      emulator: () => emulator,
      configFile: cli.config ? resolve(cli.config) : demo ? DEMO_CONFIG : undefined,
      durable: cli.db !== undefined,
      check: async () => {
        const probe = await startEmulator({ ...options(undefined, 0), db: undefined, logLevel: "silent", log: () => {} }, "real");
        await probe.close();
      },
      restart: async (importFile) => {
        const port = emulator.port;
        await emulator.close({ restarting: true });
        emulator = await startEmulator(options(importFile, port), "real", { warm: true });
        return emulator;
      },
      log: (line) => process.stderr.write(line + "\n"),
    });
    process.stderr.write(`minipod --watch: watching ${cli.config ?? "the handler modules"} for edits\n`);
  }
}

main().catch((e: unknown) => {
  const { code, port, host } = e as { code?: string; port?: number; host?: string };
  if (e instanceof ConfigError) process.stderr.write(`minipod: ${e.message}\n`);
  else if (code === "EADDRINUSE") process.stderr.write(`minipod: port ${port} of ${host} is already in use; choose another with --port, or 0 for a free one\n`);
  else process.stderr.write(`minipod: ${(e as Error)?.message ?? String(e)}\n`);
  process.exit(2);
});
