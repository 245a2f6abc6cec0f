// `npm run build:wheel`: writes python/dist/minipod-VERSION-py3-none-PLATFORM.whl, the Python
// package carrying minipod itself, so that `pip install` of it is all a Python user needs (no
// npm, no clone, no compiler): the bundled CLI (dist/minipod.js, which `npm run build` makes), the
// demo config with its TypeScript handler compiled to JavaScript, the few files of its npm
// dependencies it reads at run time (Swagger UI and GraphiQL assets), and better-sqlite3 with its
// native binding, built for the Node that runs this script (so the wheel is tagged for this
// platform, and covers that Node's ABI: process.versions.modules). The Python side finds Node on
// PATH and runs the CLI on it (minipod/_cli.py, the `minipod` command).
// The wheel itself (a zip with its .dist-info) is written by scripts/write_wheel.py.
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const require = createRequire(import.meta.url);
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
if (!existsSync(join(root, "dist", "minipod.js"))) {
  process.stderr.write("build:wheel: dist/minipod.js is missing; run `npm run build` first\n");
  process.exit(2);
}

const stage = mkdtempSync(join(tmpdir(), "minipod-wheel-"));
const pkg = join(stage, "minipod");
cpSync(join(root, "python", "src", "minipod"), pkg, { recursive: true, filter: (src) => !src.includes("__pycache__") });
const node = join(pkg, "_node");
mkdirSync(node, { recursive: true });

// The CLI as `npm install minipod` lays it out: bin/minipod.js runs dist/minipod.js, which reads
// ../package.json (its version) and ../emulator.config.json (the demo endpoints).
writeFileSync(join(node, "package.json"), JSON.stringify({ name: "minipod", version, type: "module", private: true }, null, 2) + "\n");
cpSync(join(root, "bin", "minipod.js"), join(node, "bin", "minipod.js"));
cpSync(join(root, "dist", "minipod.js"), join(node, "dist", "minipod.js"));
cpSync(join(root, "LICENSE"), join(node, "LICENSE"));
cpSync(join(root, "schema", "emulator.config.schema.json"), join(node, "schema", "emulator.config.schema.json"));

// The demo config: a TypeScript handler module would need tsx (and esbuild's native binary) at
// run time; compiled here to one .mjs file, it needs nothing.
const demo = JSON.parse(readFileSync(join(root, "emulator.config.json"), "utf8"));
for (const endpoint of demo.endpoints) {
  if (typeof endpoint.handler !== "string" || !endpoint.handler.endsWith(".ts")) continue;
  const out = `fixtures/handlers/${basename(endpoint.handler, ".ts")}.mjs`;
  await build({ absWorkingDir: root, entryPoints: [endpoint.handler], outfile: join(node, out), bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "warning" });
  endpoint.handler = `./${out}`;
}
writeFileSync(join(node, "emulator.config.json"), JSON.stringify(demo, null, 2) + "\n");

// What the bundle loads from node_modules at run time.
const modules = join(node, "node_modules");
const dirOf = (name) => dirname(require.resolve(`${name}/package.json`));
const copy = (name, files) => {
  const from = dirOf(name);
  for (const f of ["package.json", ...files]) cpSync(join(from, f), join(modules, name, f), { recursive: true });
  for (const f of ["LICENSE", "LICENSE.md", "NOTICE"]) if (existsSync(join(from, f))) cpSync(join(from, f), join(modules, name, f));
};
copy("swagger-ui-dist", ["swagger-ui-bundle.js", "swagger-ui-bundle.js.map", "swagger-ui.css", "swagger-ui.css.map"]);
copy("graphiql", ["graphiql.min.js", "graphiql.min.css"]);
copy("react", ["umd/react.production.min.js"]);
copy("react-dom", ["umd/react-dom.production.min.js"]);
copy("bindings", ["bindings.js"]);
copy("file-uri-to-path", ["index.js"]);
copy("better-sqlite3", ["lib"]);

// The native binding, where `bindings` looks for one per Node ABI (lib/binding/node-vABI-PLATFORM-ARCH),
// after a check that this Node loads it.
const built = join(dirOf("better-sqlite3"), "build", "Release", "better_sqlite3.node");
try {
  require(built);
} catch (e) {
  process.stderr.write(`build:wheel: node_modules' better-sqlite3 binding does not load on this Node (${process.version}): ${e.message}\nrebuild it for this Node (npm rebuild better-sqlite3), then try again\n`);
  process.exit(2);
}
const abi = process.versions.modules;
const target = `node-v${abi}-${process.platform}-${process.arch}`;
cpSync(built, join(modules, "better-sqlite3", "lib", "binding", target, "better_sqlite3.node"));
const nodeMajor = process.versions.node.split(".")[0];
writeFileSync(join(node, "binding.json"), JSON.stringify({ platform: process.platform, arch: process.arch, bindings: [{ abi, node: nodeMajor }] }, null, 2) + "\n");

// The wheel's platform: the binding's.
const PLATFORMS = { "linux-x64": "linux_x86_64", "linux-arm64": "linux_aarch64", "darwin-x64": "macosx_11_0_x86_64", "darwin-arm64": "macosx_11_0_arm64" };
const platform = PLATFORMS[`${process.platform}-${process.arch}`];
if (!platform) {
  process.stderr.write(`build:wheel: no wheel platform tag known for ${process.platform}-${process.arch}\n`);
  process.exit(2);
}
const out = join(root, "python", "dist");
mkdirSync(out, { recursive: true });
const python = process.env.MINIPOD_PYTHON ?? "python3";
const written = spawnSync(python, [join(root, "scripts", "write_wheel.py"), stage, out, version, platform, join(root, "python", "README.md")], { encoding: "utf8" });
rmSync(stage, { recursive: true, force: true });
if (written.status !== 0) {
  process.stderr.write(`build:wheel: ${python} scripts/write_wheel.py failed:\n${written.stderr || written.stdout || written.error}\n`);
  process.exit(2);
}
process.stdout.write(written.stdout);
