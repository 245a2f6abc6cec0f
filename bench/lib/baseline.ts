import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./processes.js";

/**
 * Builds an earlier commit of minipod (its `bin/minipod.js`) in a temporary folder, with this
 * checkout's node_modules, so the bench can load it side by side with the current build. Kept
 * between runs; answers the path of its bin.
 */
export function buildBaseline(ref: string, log: (line: string) => void): string {
  const sha = execFileSync("git", ["rev-parse", "--short", ref], { cwd: ROOT, encoding: "utf8" }).trim();
  const dir = join(tmpdir(), `minipod-bench-baseline-${sha}`);
  const bin = join(dir, "bin/minipod.js");
  if (existsSync(join(dir, "dist/minipod.js"))) return bin;
  log(`baseline: building ${ref} (${sha}) in ${dir}`);
  mkdirSync(dir, { recursive: true });
  execFileSync("sh", ["-c", `git -C "${ROOT}" archive "${sha}" | tar -x -C "${dir}"`]);
  if (!existsSync(join(dir, "node_modules"))) symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  try {
    execFileSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: dir, stdio: "ignore" });
  } catch {
    // tsc reports type errors with a failing status but still writes dist/.
  }
  if (!existsSync(join(dir, "dist/cli.js"))) throw new Error(`baseline ${ref}: the build wrote no dist/cli.js`);
  execFileSync(process.execPath, [join(dir, "scripts/bundle-cli.mjs")], { cwd: dir, stdio: "ignore" });
  return bin;
}
