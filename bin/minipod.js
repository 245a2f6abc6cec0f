#!/usr/bin/env node
// Runs the CLI bundled into dist/minipod.js (built by `npm ci` through the prepare script).
import { existsSync } from "node:fs";

const cli = new URL("../dist/minipod.js", import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write("minipod: dist/ is missing; run `npm run build` (npm ci does it for you)\n");
  process.exit(2);
}
await import(cli.href);
