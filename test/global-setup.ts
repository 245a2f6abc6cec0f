import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** End-to-end tests run the real CLI from dist/: build it once, fresh, before the suite. */
export default function setup(): void {
  const root = fileURLToPath(new URL("..", import.meta.url));
  execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
}
