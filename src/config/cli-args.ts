import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CLOCK_SPEED_MAX } from "../domain/bounds.js";
import { CLOCK_MODES, type ClockMode } from "../domain/clock.js";
import { nearest } from "../domain/nearest.js";
import { ConfigError } from "./load.js";
import { AllowedHostsSchema } from "./security-schema.js";

export interface CliOptions {
  config: string | undefined;
  port: number;
  host: string;
  allowedHosts: string[] | "all" | undefined;
  /** TLS on the same port (`--tls on|off`). */
  tls: boolean;
  db: string | undefined;
  importFile: string | undefined;
  clock: ClockMode | undefined;
  speed: number | undefined;
  logLevel: "debug" | "info" | "warn" | "error" | "silent" | undefined;
  /** The interpreter of the worker processes of the config's images (`{python}`). */
  python: string | undefined;
  watch: boolean;
  exitOnStdinClose: boolean;
  help: boolean;
  version: boolean;
}

/** A command-line flag, as `--help` and the flag tables of docs/ show it. */
export interface Flag {
  name: string;
  short?: string;
  /** What the flag takes (`FILE`, `N`); none for a switch. */
  arg?: string;
  /** The environment variable read when the flag is not given. */
  env?: string;
  /** What applies when neither is given; "" when nothing does. */
  default: string;
  text: string;
}

/**
 * A program that starts minipod as its child (the Python package does) holds its stdin open: the
 * pipe closes when that program ends, even killed with SIGKILL, and minipod ends with it.
 */
const STDIN_TEXT = "stop (as on SIGTERM) when stdin closes: for a program that starts minipod as its child and holds its stdin open, so minipod ends with it, even when it is killed";

/** The flags of `minipod`: the one list that the parser, `--help` and the table of docs/configuration.md follow. */
export const FLAGS: readonly Flag[] = [
  { name: "config", arg: "FILE", env: "MINIPOD_CONFIG", default: "./emulator.config.json if present, else the demo endpoints", text: "the config file" },
  { name: "port", arg: "N", env: "MINIPOD_PORT", default: "8080", text: "the port to listen on; 0 picks a free one" },
  { name: "host", arg: "HOST", env: "MINIPOD_HOST", default: "127.0.0.1", text: "the interface to bind" },
  {
    name: "allowed-hosts",
    arg: "LIST",
    env: "MINIPOD_ALLOWED_HOSTS",
    default: "",
    text: 'host names answered besides the bound address, localhost, 127.0.0.1 and [::1], comma-separated (".example.test": it and its subdomains; "all": no check); added to allowedHosts of the config',
  },
  {
    name: "tls",
    arg: "on|off",
    env: "MINIPOD_TLS",
    default: "on",
    text: "TLS on the same port, with a certificate of minipod's local authority (kept in MINIPOD_TLS_DIR, else ~/.local/share/minipod/tls); off: plain HTTP alone",
  },
  { name: "db", arg: "FILE", env: "MINIPOD_DB", default: "in memory", text: "SQLite file; state survives a restart (WAL)" },
  { name: "import", arg: "FILE", default: "", text: 'start from a state file written by "minipod export"' },
  {
    name: "clock",
    arg: "real|manual|auto",
    env: "MINIPOD_CLOCK",
    default: "the config's, else real",
    text: "real: time follows the wall clock; manual: time moves only when told; auto: follows the wall clock, and skips to the next timer whenever a client waits and nothing runs on real time",
  },
  { name: "speed", arg: "X", env: "MINIPOD_SPEED", default: "the config's, else 1", text: "real and auto clocks: virtual ms per wall ms, above 0 and at most 1000000" },
  { name: "log-level", arg: "LEVEL", env: "MINIPOD_LOG_LEVEL", default: "the config's, else info", text: "debug, info, warn, error or silent" },
  { name: "python", arg: "PATH", env: "MINIPOD_PYTHON", default: "python3", text: "the interpreter ({python}) of the worker processes minipod starts for images: its Flash and SDK 2.x workers" },
  { name: "watch", default: "", text: "reload handler modules when edited (jobs running finish on their code), and the config file (restarting on the same port, state kept)" },
  { name: "exit-on-stdin-close", default: "", text: STDIN_TEXT },
  { name: "help", short: "h", default: "", text: "this help" },
  { name: "version", short: "v", default: "", text: "the version" },
];

/** The flags of `minipod export FILE`. */
export const EXPORT_FLAGS: readonly Flag[] = [
  { name: "url", arg: "URL", env: "MINIPOD_URL", default: "http://127.0.0.1:8080", text: "the running minipod" },
  { name: "control-key", arg: "KEY", env: "MINIPOD_CONTROL_KEY", default: "", text: "its controlKey, when it has one" },
  { name: "help", short: "h", default: "", text: "this help" },
];

/** The flags of `minipod worker -- CMD`. */
export const WORKER_FLAGS: readonly Flag[] = [
  { name: "url", arg: "URL", env: "MINIPOD_URL", default: "http://127.0.0.1:8080", text: "the running minipod" },
  { name: "endpoint", arg: "ID", default: 'the only endpoint with "handler": "external"', text: "the endpoint whose jobs the worker takes" },
  { name: "worker-id", arg: "ID", default: "14 random characters, as the service's", text: "the worker id, RUNPOD_POD_ID: the workerId of the jobs it runs" },
  {
    name: "workers",
    arg: "N",
    default: "1; a load-balancing endpoint: as its scaler asks",
    text: "run N copies of the command, worker ids ID-1 .. ID-N (1 to 64); on a load-balancing endpoint a fixed set instead of following its scaler",
  },
  { name: "key", arg: "KEY", env: "RUNPOD_AI_API_KEY", default: "minipod-worker", text: "the API key the worker sends (with the worker scope once auth.keys is set)" },
  { name: "restart", default: "", text: "start the command again when it exits (1 s later, doubling to 30 s while it keeps failing fast)" },
  {
    name: "watch",
    default: "",
    text: "restart the command at once (SIGKILL; a job it runs goes back to the queue) when one of its source files (its language's) or a config file under the watched folder changes; not on logs or data it writes",
  },
  { name: "watch-path", arg: "PATHS", default: "the current folder", text: "with --watch: the files and folders watched, comma-separated" },
  { name: "batch", default: "", text: "run batch workers: they take the endpoint's batch requests, and only those" },
  { name: "control-key", arg: "KEY", env: "MINIPOD_CONTROL_KEY", default: "", text: "minipod's controlKey, when it has one" },
  { name: "exit-on-stdin-close", default: "", text: STDIN_TEXT },
  { name: "help", short: "h", default: "", text: "this help" },
];

/** `--port N` (or `-h, --help`) as a flag's column of `--help` and of the docs' tables shows it. */
export const flagSyntax = (f: Flag): string => `${f.short ? `-${f.short}, ` : ""}--${f.name}${f.arg ? ` ${f.arg}` : ""}`;

/** The options part of a usage text: one line a flag, with its default and variable. */
export function options(flags: readonly Flag[]): string {
  const width = Math.max(...flags.map((f) => flagSyntax(f).length)) + 2;
  return flags
    .map((f) => {
      const more = [f.default && `default: ${f.default}`, f.env && `env ${f.env}`].filter(Boolean).join("; ");
      return `  ${flagSyntax(f).padEnd(width)}${f.text}${more ? ` (${more})` : ""}`;
    })
    .join("\n");
}

export const EXPORT_USAGE = `Usage: minipod export FILE [options]

Saves a running minipod's whole state (a SQLite file, secrets redacted) to FILE, for
"minipod --import FILE".

Options:
${options(EXPORT_FLAGS)}`;

export const USAGE = `Usage: minipod [options]
       minipod export FILE [--url URL] [--control-key KEY]
       minipod worker [options] -- CMD [ARGS...]
       minipod hub-test [DIR] [options] [-- CMD [ARGS...]]

A local emulator of a serverless job-queue service (queue operations under /v2/{endpoint_id}).

Options:
${options(FLAGS)}

Commands:
  export FILE          save a running emulator's state (secrets redacted) to FILE; see "minipod export --help"
  worker -- CMD        run a worker process (python3 handler.py) for an "external" endpoint of a
                       running minipod; see "minipod worker --help"
  hub-test [DIR]       run a worker's .runpod/tests.json as the Hub does, against its handler; see
                       "minipod hub-test --help"

A flag wins over its environment variable.`;

const DEFAULT_PORT = 8080;
const DEFAULT_CONFIG = "emulator.config.json";

/** The `parseArgs` options of a list of flags. */
export function parseOptions(flags: readonly Flag[]): Record<string, { type: "string" | "boolean"; short?: string }> {
  return Object.fromEntries(flags.map((f) => [f.name, { type: f.arg ? "string" : "boolean", ...(f.short ? { short: f.short } : {}) }]));
}

/**
 * `parseArgs` on `flags`; a flag it does not know, or one given wrongly, is a ConfigError that says
 * so (with the nearest flag when it looks like a typo of one) above `usage`.
 */
export function parseFlags(args: string[], flags: readonly Flag[], usage: string, allowPositionals = false): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    return parseArgs({ args, strict: true, allowPositionals, options: parseOptions(flags) });
  } catch (e) {
    const unknown = (e as { code?: string }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? /option '([^']+)'/i.exec((e as Error).message)?.[1] : undefined;
    if (unknown === undefined) throw new ConfigError(`${(e as Error).message}\n\n${usage}`);
    const near = unknown.startsWith("--") ? nearest(unknown.slice(2), flags.map((f) => f.name)) : undefined;
    throw new ConfigError(`unknown flag ${unknown}${near ? `: did you mean --${near}?` : ""}\n\n${usage}`);
  }
}

/** Parses the command line (and MINIPOD_* variables); throws ConfigError naming a bad flag. */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): CliOptions {
  const { values } = parseFlags(argv, FLAGS, USAGE);
  const pick = (name: string): string | undefined => {
    const flag = FLAGS.find((f) => f.name === name)!;
    return (values[name] as string | undefined) ?? (flag.env === undefined ? undefined : env[flag.env]);
  };

  const portText = pick("port");
  const port = portText === undefined ? DEFAULT_PORT : Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`--port must be an integer from 0 to 65535, got "${portText}"`);

  const clock = pick("clock");
  if (clock !== undefined && !(CLOCK_MODES as readonly string[]).includes(clock)) throw new ConfigError(`--clock must be "real", "manual" or "auto", got "${clock}"`);

  const speedText = pick("speed");
  const speed = speedText === undefined ? undefined : Number(speedText);
  if (speed !== undefined && !(speed > 0 && speed <= CLOCK_SPEED_MAX)) throw new ConfigError(`--speed must be a positive number up to ${CLOCK_SPEED_MAX}, got "${speedText}"`);

  const logLevel = pick("log-level");
  if (logLevel !== undefined && !["debug", "info", "warn", "error", "silent"].includes(logLevel)) {
    throw new ConfigError(`--log-level must be one of debug, info, warn, error, silent; got "${logLevel}"`);
  }

  const allowedText = pick("allowed-hosts");
  let allowedHosts: CliOptions["allowedHosts"];
  if (allowedText !== undefined) {
    const items = allowedText.split(",").map((h) => h.trim()).filter((h) => h !== "");
    const parsed = AllowedHostsSchema.safeParse(items.length === 1 && items[0] === "all" ? "all" : items);
    if (!parsed.success) throw new ConfigError(`--allowed-hosts must list host names without ports, comma-separated (or "all"), got "${allowedText}"`);
    allowedHosts = parsed.data;
  }

  const tls = pick("tls") ?? "on";
  if (tls !== "on" && tls !== "off") throw new ConfigError(`--tls must be "on" or "off", got "${tls}"`);

  let config = pick("config");
  if (config === undefined && existsSync(join(cwd, DEFAULT_CONFIG))) config = join(cwd, DEFAULT_CONFIG);

  return {
    config,
    port,
    host: pick("host") ?? "127.0.0.1",
    allowedHosts,
    tls: tls === "on",
    db: pick("db"),
    importFile: pick("import"),
    clock: clock as CliOptions["clock"],
    speed,
    logLevel: logLevel as CliOptions["logLevel"],
    python: pick("python") || undefined,
    watch: values.watch === true,
    exitOnStdinClose: values["exit-on-stdin-close"] === true,
    help: values.help === true,
    version: values.version === true,
  };
}
