import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ConfigError } from "./load.js";

export interface CliOptions {
  config: string | undefined;
  port: number;
  host: string;
  db: string | undefined;
  importFile: string | undefined;
  clock: "real" | "manual" | undefined;
  speed: number | undefined;
  logLevel: "debug" | "info" | "warn" | "error" | "silent" | undefined;
  help: boolean;
  version: boolean;
}

export const USAGE = `Usage: minipod [options]

A local emulator of a serverless job-queue service (queue operations under /v2/{endpoint_id}).

Options:
  --config FILE        config file (default: ./emulator.config.json when present)
  --port N             port to listen on; 0 picks a free one (default: 8080)
  --host HOST          interface to bind (default: 127.0.0.1)
  --db FILE            SQLite file for state that survives a restart (default: in memory)
  --import FILE        start from a state file written by "minipod export"
  --clock real|manual  real: time follows the wall clock; manual: time moves only when told
  --speed X            real clock: virtual ms per wall ms (default: 1)
  --log-level LEVEL    debug | info | warn | error | silent (default: info)
  -h, --help           this help
  -v, --version        the version

Commands:
  minipod export FILE [--url URL]   save a running emulator's state (secrets redacted) to FILE
  minipod worker [options] -- CMD   run a worker process (python3 handler.py) for an "external"
                                    endpoint of a running minipod (minipod worker --help)

Environment: MINIPOD_CONFIG, MINIPOD_PORT, MINIPOD_HOST, MINIPOD_DB, MINIPOD_CLOCK, MINIPOD_SPEED,
MINIPOD_LOG_LEVEL stand in for the flags of the same name; flags win.`;

const DEFAULT_PORT = 8080;
const DEFAULT_CONFIG = "emulator.config.json";

/** Parses the command line (and MINIPOD_* variables); throws ConfigError naming a bad flag. */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): CliOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        config: { type: "string" },
        port: { type: "string" },
        host: { type: "string" },
        db: { type: "string" },
        import: { type: "string" },
        clock: { type: "string" },
        speed: { type: "string" },
        "log-level": { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
      },
    }));
  } catch (e) {
    throw new ConfigError(`${(e as Error).message}\n\n${USAGE}`);
  }
  const pick = (flag: keyof typeof values, name: string) => (values[flag] as string | undefined) ?? env[name];

  const portText = pick("port", "MINIPOD_PORT");
  const port = portText === undefined ? DEFAULT_PORT : Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`--port must be an integer from 0 to 65535, got "${portText}"`);

  const clock = pick("clock", "MINIPOD_CLOCK");
  if (clock !== undefined && clock !== "real" && clock !== "manual") throw new ConfigError(`--clock must be "real" or "manual", got "${clock}"`);

  const speedText = pick("speed", "MINIPOD_SPEED");
  const speed = speedText === undefined ? undefined : Number(speedText);
  if (speed !== undefined && !(speed > 0 && Number.isFinite(speed))) throw new ConfigError(`--speed must be a positive number, got "${speedText}"`);

  const logLevel = pick("log-level", "MINIPOD_LOG_LEVEL");
  if (logLevel !== undefined && !["debug", "info", "warn", "error", "silent"].includes(logLevel)) {
    throw new ConfigError(`--log-level must be one of debug, info, warn, error, silent; got "${logLevel}"`);
  }

  let config = pick("config", "MINIPOD_CONFIG");
  if (config === undefined && existsSync(join(cwd, DEFAULT_CONFIG))) config = join(cwd, DEFAULT_CONFIG);

  return {
    config,
    port,
    host: pick("host", "MINIPOD_HOST") ?? "127.0.0.1",
    db: pick("db", "MINIPOD_DB"),
    importFile: values.import as string | undefined,
    clock: clock as CliOptions["clock"],
    speed,
    logLevel: logLevel as CliOptions["logLevel"],
    help: values.help === true,
    version: values.version === true,
  };
}
