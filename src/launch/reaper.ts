import { spawn, type ChildProcess } from "node:child_process";
import type { Socket } from "node:net";

/**
 * The reaper's program, run by `node -e` (the same from src/ and dist/): it keeps the process
 * groups it is told of (`+PID`, `-PID` lines on stdin) and, when stdin ends, which happens when
 * the process that started it ends however it ends (SIGKILL included), kills them.
 */
const PROGRAM = `
const groups = new Set();
let rest = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  const lines = (rest + chunk).split("\\n");
  rest = lines.pop();
  for (const line of lines) {
    const pid = Number(line.slice(1));
    if (!Number.isInteger(pid) || pid <= 0) continue;
    if (line[0] === "+") groups.add(pid);
    else groups.delete(pid);
  }
});
const reap = () => {
  for (const pid of groups) {
    try { process.kill(-pid, "SIGKILL"); } catch {}
  }
  process.exit(0);
};
process.stdin.on("end", reap);
process.stdin.on("error", reap);
`;

let reaper: ChildProcess | undefined;

function started(): ChildProcess | undefined {
  if (reaper?.exitCode === null && reaper.signalCode === null) return reaper;
  try {
    // Detached: a signal to this process's group (Ctrl-C, kill -9 -PGID) does not reach it.
    reaper = spawn(process.execPath, ["-e", PROGRAM], { stdio: ["pipe", "ignore", "ignore"], detached: true });
  } catch {
    return undefined;
  }
  reaper.on("error", () => {
    // No reaper (a node that cannot be started again): worker processes are stopped as before, on close.
  });
  const stdin = reaper.stdin as Socket;
  stdin.on("error", () => {});
  // Neither the reaper nor its pipe keeps this process alive.
  reaper.unref();
  stdin.unref();
  return reaper;
}

/**
 * Worker processes (process groups of their own) must not outlive the process that started them:
 * when it dies without stopping them (killed, or a test runner's worker torn down), nothing else
 * would, and they would go on polling a minipod that is gone. One small process per process that
 * starts workers, the reaper, is told of each group and kills those left when this process ends.
 */
export const reaperOf = {
  /** The group led by `pid` is killed if this process ends while it runs. */
  watch(pid: number): void {
    started()?.stdin?.write(`+${pid}\n`);
  },
  /** The group led by `pid` has ended: nothing to kill. */
  forget(pid: number): void {
    if (reaper?.stdin?.writable) reaper.stdin.write(`-${pid}\n`);
  },
};
