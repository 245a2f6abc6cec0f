import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * End-to-end tests run the real CLI from dist/ (bundled): build it once, fresh, before the suite. Type
 * errors do not stop the build (tsc still emits); `npm test` type-checks separately first.
 */
export default function setup(): void {
  const root = fileURLToPath(new URL("..", import.meta.url));
  // scripts/stress.sh runs the same files many times over: it builds on its first round only.
  if (process.env.MINIPOD_TEST_REUSE_BUILD === "1") return;
  // From nothing: a module moved or deleted since the last build leaves no stale file behind.
  rmSync(`${root}dist`, { recursive: true, force: true });
  const r = spawnSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, "-p", "tsconfig.build.json"], { cwd: root, encoding: "utf8" });
  if (r.status !== 0) process.stderr.write(`warning: the build reported errors (dist/ was still written):\n${r.stdout}${r.stderr}\n`);
  // bin/minipod.js runs the bundle made from dist/cli.js.
  const b = spawnSync(process.execPath, [`${root}scripts/bundle-cli.mjs`], { cwd: root, encoding: "utf8" });
  if (b.status !== 0) throw new Error(`bundling the CLI failed:\n${b.stdout}${b.stderr}`);
}
