import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../../bin/minipod.js", import.meta.url));

export interface RunningCli {
  url: string;
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Advances the emulator's manual clock over HTTP. */
  advance(ms: number): Promise<void>;
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
    const timer = setTimeout(() => reject(new Error(`minipod did not start in time:\n${out}\n${err}`)), 15_000);
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
      const res = await fetch(`${url}/_emulator/clock/advance`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ms }) });
      if (!res.ok) throw new Error(`advance failed: ${res.status} ${await res.text()}`);
    },
  };
}
