import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { via } from "./recorder.js";

const BIN = fileURLToPath(new URL("../../bin/minipod.js", import.meta.url));

/**
 * How long one start of the CLI may take to print its banner (or to exit) on a 2-core machine
 * that other work keeps busy: each start is bounded by this, not by what is left of its test.
 */
export const START_MS = 15_000;

/**
 * The timeout of a test that starts the CLI `starts` times one after another (a failed start,
 * `minipod export`, each a process of its own) and spends `rest` ms on its own steps: it grows
 * with the starts, each of which fails on its own bound (START_MS) if it hangs.
 */
export const forStarts = (starts: number, rest = 15_000): number => starts * START_MS + rest;

export interface RunningCli {
  url: string;
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Advances the emulator's manual clock over HTTP. */
  advance(ms: number): Promise<void>;
  /** Resolves once stderr contains `text` (at once if it does). */
  stderrContains(text: string): Promise<void>;
}

/** Starts the real CLI (`bin/minipod.js`) on port 0 (unless `port: false`: the args give it) and waits for the banner's URL. */
export async function startCli(args: string[], env: NodeJS.ProcessEnv = {}, o: { port?: boolean } = {}): Promise<RunningCli> {
  const proc = spawn(process.execPath, [BIN, ...(o.port === false ? [] : ["--port", "0"]), ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`minipod did not start within ${START_MS / 1000} s:\n${out}\n${err}`)), START_MS);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    proc.stdout!.on("data", check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`minipod exited with ${code} before listening:\n${out}\n${err}`));
    });
  });
  return {
    url,
    proc,
    stdout: () => out,
    stderr: () => err,
    stop: async (signal = "SIGTERM") => {
      if (proc.exitCode === null) proc.kill(signal);
      return exited;
    },
    advance: async (ms) => {
      // Through the recorder while one relays to this CLI, so that a recording replays the move.
      const res = await fetch(`${via(url)}/_emulator/clock/advance`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ms }) });
      if (!res.ok) throw new Error(`advance failed: ${res.status} ${await res.text()}`);
    },
    stderrContains: (text) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!err.includes(text)) return false;
          proc.stderr!.off("data", check);
          resolve();
          return true;
        };
        if (!check()) proc.stderr!.on("data", check);
      }),
  };
}
