// Bundles the compiled CLI (dist/cli.js) and the packages it imports into one file,
// dist/minipod.js, which bin/minipod.js runs. Node resolves, reads and compiles each ES module
// separately: minipod's own modules, zod, hono and the OpenAPI packages are a few hundred files,
// and loading them was most of a cold start. better-sqlite3 (a native addon found at run time)
// and tsx (loaded only for TypeScript handler modules) stay outside the bundle.
// The library entry (dist/index.js, for createEmulator) is tsc's output, unbundled.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

await build({
  absWorkingDir: root,
  entryPoints: ["dist/cli.js"],
  outfile: "dist/minipod.js",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["better-sqlite3", "tsx", "tsx/*"],
  // Packages written as CommonJS call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __minipodRequire } from 'node:module'; const require = __minipodRequire(import.meta.url);" },
  sourcemap: "linked",
  logLevel: "warning",
});
