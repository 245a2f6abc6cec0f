#!/usr/bin/env node
import { banner } from "./banner.js";
import { parseCli, USAGE } from "./config/cli-args.js";
import { ConfigError } from "./config/load.js";
import { createEmulator } from "./emulator.js";
import { exportCommand } from "./export-command.js";
import { workerCommand } from "./worker-command.js";
import { VERSION } from "./version.js";

/** `minipod`: parse flags, start the emulator, print the banner, stop cleanly on a signal. */
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === "export") return exportCommand(argv.slice(1), process.env);
  if (argv[0] === "worker") process.exit(await workerCommand(argv.slice(1), process.env));
  const cli = parseCli(argv);
  if (cli.help) {
    process.stdout.write(USAGE + "\n");
    return;
  }
  if (cli.version) {
    process.stdout.write(VERSION + "\n");
    return;
  }
  const emulator = await createEmulator({
    port: cli.port,
    host: cli.host,
    config: cli.config ?? {},
    db: cli.db,
    importFile: cli.importFile,
    ...(cli.clock || cli.speed ? { clock: { mode: cli.clock ?? "real", ...(cli.speed ? { speed: cli.speed } : {}) } } : {}),
    ...(cli.logLevel ? { logLevel: cli.logLevel } : {}),
    log: (line) => process.stderr.write(line + "\n"),
  });
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

  const exposure = exposureWarning(cli.host, emulator.config.auth.keys.length > 0, emulator.config.controlKey !== undefined);
  if (exposure) process.stderr.write(exposure + "\n");
  const specs = emulator.endpoints();
  process.stdout.write(
    banner(emulator, { version: VERSION, db: cli.db ?? ":memory: (state ends with the process; --db FILE keeps it)", configSource: cli.config ?? "none (built-in defaults)", endpoints: specs, recovered: emulator.recovered }),
  );
}

/**
 * The warning printed when minipod listens beyond this machine with no API key configured: every
 * key is then accepted, so anyone on the network can use it (and, without a controlKey, reset it).
 */
function exposureWarning(host: string, hasKeys: boolean, hasControlKey: boolean): string | undefined {
  const loopback = host === "localhost" || host === "::1" || host.startsWith("127.");
  if (loopback || hasKeys) return undefined;
  const control = hasControlKey ? "" : " and its control API (/_emulator: reset, clock, export)";
  return `minipod: WARNING: minipod is listening on ${host}, beyond this machine, and no API keys are configured: anyone who can reach it can use every route${control}. Set auth.keys${hasControlKey ? "" : " and controlKey"} in the config, or bind 127.0.0.1.`;
}

main().catch((e: unknown) => {
  if (e instanceof ConfigError) process.stderr.write(`minipod: ${e.message}\n`);
  else process.stderr.write(`minipod: ${(e as Error)?.message ?? String(e)}\n`);
  process.exit(2);
});
