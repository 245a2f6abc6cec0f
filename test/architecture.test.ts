import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { SERVICES } from "../src/services/index.js";

// The layers of docs/ARCHITECTURE.md, checked on the imports of every source file.

const SRC = fileURLToPath(new URL("../src", import.meta.url));

interface Import {
  from: string;
  /** A source file of src/ (relative to it), or a package name. */
  to: string;
  typeOnly: boolean;
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  const out: Import[] = [];
  const re = /^\s*(import|export)\s+(type\s+)?[^"';]*?from\s+["']([^"']+)["']|^\s*import\s+["']([^"']+)["']|import\(["']([^"']+)["']\)/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const spec = m[3] ?? m[4] ?? m[5]!;
    // `import type`, `import { type A, type B }` and `import("...")` in a type are gone at run time.
    const names = /^\s*(?:import|export)\s*\{([^}]*)\}/.exec(m[0])?.[1];
    const allTypes = names !== undefined && names.split(",").every((n) => !n.trim() || n.trim().startsWith("type "));
    const typeOnly = m[2] !== undefined || m[5] !== undefined || allTypes;
    const from = relative(SRC, file);
    if (!spec.startsWith(".")) {
      out.push({ from, to: spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!, typeOnly });
      continue;
    }
    const target = resolve(dirname(file), spec);
    const source = [target.replace(/\.js$/, ".ts"), target.replace(/\.js$/, ".tsx"), target].find((p) => {
      try {
        return statSync(p).isFile();
      } catch {
        return false;
      }
    });
    out.push({ from, to: relative(SRC, source ?? target), typeOnly });
  }
  return out;
}

const ALL = files(SRC).flatMap(importsOf);

it("reads the imports of every source file", () => expect(ALL.length).toBeGreaterThan(1000));

it("keeps every source file within 400 lines", () => {
  const long = files(SRC).map((f) => ({ f: relative(SRC, f), lines: readFileSync(f, "utf8").split("\n").length })).filter((x) => x.lines > 400);
  expect(long.map((x) => `${x.f}: ${x.lines} lines`)).toEqual([]);
});
const layer = (path: string) => path.split("/")[0]!;
const violations = (rule: (i: Import) => boolean) => ALL.filter(rule).map((i) => `${i.from} → ${i.to}${i.typeOnly ? " (type)" : ""}`);

/** A top-level folder of src/ (or a file of its own there: cli.ts, index.ts, version.ts). */
const folder = (path: string) => (path.includes("/") ? path.split("/")[0]! : path.replace(/\.tsx?$/, ""));

/** Every folder each folder reaches at run time, through any chain of imports (type-only ones aside, unless `types`). */
function folderReach(folder: (path: string) => string | undefined, types = false): Map<string, Set<string>> {
  const graph = new Map<string, string[]>();
  for (const i of ALL) if ((types || !i.typeOnly) && /\.tsx?$/.test(i.to)) graph.set(i.from, [...(graph.get(i.from) ?? []), i.to]);
  const reach = new Map<string, Set<string>>();
  for (const start of graph.keys()) {
    const seen = new Set<string>();
    const todo = [start];
    while (todo.length) {
      for (const next of graph.get(todo.pop()!) ?? []) {
        if (seen.has(next)) continue;
        seen.add(next);
        todo.push(next);
      }
    }
    const from = folder(start);
    if (from === undefined) continue;
    const set = reach.get(from) ?? new Set<string>();
    for (const file of seen) if (folder(file) !== undefined && folder(file) !== from) set.add(folder(file)!);
    reach.set(from, set);
  }
  return reach;
}

const loopsIn = (reach: Map<string, Set<string>>) => [...reach].flatMap(([a, to]) => [...to].filter((b) => a < b && reach.get(b)?.has(a)).map((b) => `${a} ⇄ ${b}`));

describe("the folders", () => {
  const reach = folderReach(folder);

  // cli → compose → services → (http, domain, store), and nothing upward; config is read by
  // compose (and the command's flags), and holds each service's config part from its folder.
  const MAY_REACH: Record<string, string[]> = {
    cli: ["compose", "config", "services", "http", "store", "domain", "launch", "version"],
    compose: ["config", "services", "http", "store", "domain", "launch", "version"],
    config: ["domain"],
    services: ["http", "store", "domain", "version"],
    http: ["domain", "version"],
    store: ["domain"],
    launch: ["domain"],
    domain: [],
    version: [],
  };

  it("each folder reaches, directly or not, only the folders below it", () => {
    const upward = [...reach].flatMap(([from, to]) => (from === "index" ? [] : [...to].filter((t) => !(MAY_REACH[from] ?? []).includes(t)).map((t) => `${from} → ${t}`)));
    expect(upward).toEqual([]);
  });

  it("no two folders reach each other", () => expect(loopsIn(reach)).toEqual([]));

  it("nor do config/ and services/, type-only imports included: a service declares its part, the config joins the parts it is given", () => {
    expect(loopsIn(folderReach(folder, true)).filter((loop) => loop.includes("config") && loop.includes("services"))).toEqual([]);
  });

  it("launch/ imports only domain/, type-only imports included: the wiring gives it the engine's types (launch/engine.ts)", () => {
    expect(violations((i) => layer(i.from) === "launch" && /\.tsx?$/.test(i.to) && !["launch", "domain"].includes(layer(i.to)))).toEqual([]);
  });

  it("nor do the parts of http/ (each route family, the dashboard, load-balancing, the assets)", () => {
    const part = (path: string) => /^http\/(routes\/[^/]+|[^/]+)\//.exec(path)?.[0];
    expect(loopsIn(folderReach(part))).toEqual([]);
  });
});

describe("the layers", () => {
  it("domain/ (the job engine) imports no HTTP, no SQL, no service, no wiring", () => {
    expect(
      violations(
        (i) =>
          layer(i.from) === "domain" &&
          (["hono", "@hono/zod-openapi", "@hono/node-server", "better-sqlite3"].includes(i.to) || ["http", "store", "services", "compose", "cli", "launch"].includes(layer(i.to))),
      ),
    ).toEqual([]);
  });

  it("http/ never reaches the store, the services or the wiring", () => {
    expect(violations((i) => layer(i.from) === "http" && (i.to === "better-sqlite3" || ["store", "services", "compose", "cli", "launch"].includes(layer(i.to))))).toEqual([]);
  });

  it("store/ implements the domain's and the services' storage interfaces, and knows nothing above them", () => {
    expect(
      violations((i) => layer(i.from) === "store" && (["http", "compose", "cli", "launch", "config"].includes(layer(i.to)) || (layer(i.to) === "services" && i.to !== "services/shared/storage.ts"))),
    ).toEqual([]);
  });

  it("services/ never reach the wiring, and use each other only through their entry points", () => {
    const folder = (p: string) => p.split("/")[1]!;
    expect(
      violations((i) => {
        if (layer(i.from) !== "services") return false;
        if (["compose", "cli", "launch"].includes(layer(i.to))) return true;
        if (layer(i.to) !== "services" || folder(i.to) === folder(i.from) || folder(i.to) === "shared" || i.from === "services/index.ts") return false;
        return !i.to.endsWith("/index.ts");
      }),
    ).toEqual([]);
  });

  it("config/ imports no service, not even a type: the services' parts come to it from the list (compose/config.ts)", () => {
    expect(violations((i) => layer(i.from) === "config" && ["services", "http", "store", "compose"].includes(layer(i.to)))).toEqual([]);
  });

  it("no import circle of files, type-only imports included, but the services' registry type", () => {
    // A circle of type-only imports is gone at run time, but a reader still cannot read one file
    // without the other. Each strongly connected part of the import graph is a circle. The one
    // left lies wholly in services/: the list (services/index.ts) types the registry and the
    // config every service is given (shared/service.ts names them by type only).
    const graph = new Map<string, string[]>();
    for (const i of ALL) if (i.to.includes(".ts")) graph.set(i.from, [...(graph.get(i.from) ?? []), i.to]);
    const circles = stronglyConnected(graph).filter((part) => part.length > 1 && !(part.includes("services/index.ts") && part.every((f) => f.startsWith("services/"))));
    expect(circles.map((part) => part.sort().join(" ⇄ "))).toEqual([]);
  });

  it("no import circles (type-only imports aside: they are gone at run time)", () => {
    const graph = new Map<string, string[]>();
    for (const i of ALL) if (!i.typeOnly && i.to.includes(".ts")) graph.set(i.from, [...(graph.get(i.from) ?? []), i.to]);
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (node: string, path: string[]) => {
      if (state.get(node) === "done") return;
      if (state.get(node) === "open") {
        cycles.push([...path.slice(path.indexOf(node)), node].join(" → "));
        return;
      }
      state.set(node, "open");
      for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
      state.set(node, "done");
    };
    for (const node of graph.keys()) visit(node, []);
    expect(cycles).toEqual([]);
  });
});

/** The strongly connected parts of a graph (Tarjan's): each part of more than one node is a circle, or several. */
function stronglyConnected(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const parts: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      part.push(w);
      if (w === v) break;
    }
    parts.push(part);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return parts;
}

describe("time", () => {
  // docs/ARCHITECTURE.md, "Time from one place": domain/ reads time only from what it is given
  // (the virtual clock, and the Wall of domain/wall.ts, which compose/process-wall.ts implements).
  const RAW_TIMERS = new Set(["setTimeout", "setInterval", "setImmediate", "clearTimeout", "clearInterval", "clearImmediate", "hrtime"]);
  /** Each place of `text` (code, comments aside) that reads the wall clock or sets a timer of its own. */
  function wallReads(file: string, text: string): string[] {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const found: string[] = [];
    const at = (node: ts.Node, what: string) => found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}`);
    const visit = (node: ts.Node) => {
      if (ts.isIdentifier(node) && RAW_TIMERS.has(node.text)) at(node, node.text);
      else if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && ["Date", "performance"].includes(node.expression.text) && node.name.text === "now") at(node, node.getText());
      else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "Date" && !node.arguments?.length) at(node, "new Date()");
      else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "Date") at(node, "Date()");
      ts.forEachChild(node, visit);
    };
    visit(source);
    return found;
  }

  it("finds a read of the wall clock or a timer of its own, not a word of a comment", () => {
    const text = [
      "// Date.now() and setTimeout are named here only",
      "const a = Date.now();",
      "setImmediate(() => {});",
      "const b = performance.now() + new Date().getTime();",
      'const c = new Date(0);\nconst s = "setTimeout";',
    ].join("\n");
    expect(wallReads("x.ts", text)).toEqual(["x.ts:2: Date.now", "x.ts:3: setImmediate", "x.ts:4: performance.now", "x.ts:4: new Date()"]);
  });

  it("domain/ reads no wall clock and sets no timer of its own: no Date.now(), performance.now(), new Date(), raw setTimeout, setInterval or setImmediate", () => {
    const found = files(join(SRC, "domain")).flatMap((f) => wallReads(relative(SRC, f), readFileSync(f, "utf8")));
    expect(found).toEqual([]);
  });

  it("the wall's one implementation is the edge's, and the clock is given it", () => {
    const implementers = files(SRC).filter((f) => /implements (Wall|WallTime)\b/.test(readFileSync(f, "utf8"))).map((f) => relative(SRC, f));
    expect(implementers.sort()).toEqual(["compose/process-wall.ts", "domain/wall.ts"]);
    expect(violations((i) => i.to === "compose/process-wall.ts" && layer(i.from) !== "compose")).toEqual([]);
  });
});

describe("each part is given what it uses", () => {
  // Core (http/core.ts) holds everything the HTTP layer may reach; compose/ builds it. Every
  // route, view and worker launcher names the members it reads (Pick<Core, ...>, or the parameter
  // types of the parts it mounts), so its signature says its reach.
  it("no file outside compose/ takes the whole Core (or the whole runtime)", () => {
    const whole = files(SRC)
      .map((f) => relative(SRC, f))
      .filter((f) => !f.startsWith("compose/") && f !== "http/core.ts")
      .flatMap((f) =>
        readFileSync(join(SRC, f), "utf8")
          .split("\n")
          .map((line, n) => ({ line, at: `${f}:${n + 1}` }))
          .filter(({ line }) => !/^\s*(import|\*|\/\/|\/\*\*)/.test(line))
          .filter(({ line }) => /\b(Core|EmulatorRuntime)\b/.test(line.replace(/\b(Pick|Omit)<(Core|EmulatorRuntime), /g, "").replace(/\b(Core|EmulatorRuntime)\["/g, ""))),
      );
    expect(whole.map((x) => `${x.at}: ${x.line.trim()}`)).toEqual([]);
  });

  // The same inside services/: a resource's view, route, GraphQL part or model names the models
  // and engine members it reads (Pick<ViewContext, ...>, Pick<EngineView, ...>), not the registry
  // or the engine whole. Only the service's contract (shared/service.ts, whose ServiceDef gives a
  // service's build and seed the context they wire its models from) and the assembly of every
  // GraphQL part (shared/graphql.ts) name them whole.
  it("no file in services/ takes the whole ViewContext, EngineView or service context", () => {
    const mounts = ["services/shared/service.ts", "services/shared/graphql.ts"];
    const whole = files(join(SRC, "services"))
      .map((f) => relative(SRC, f))
      .filter((f) => !mounts.includes(f))
      .flatMap((f) =>
        readFileSync(join(SRC, f), "utf8")
          .split("\n")
          .map((line, n) => ({ line, at: `${f}:${n + 1}` }))
          .filter(({ line }) => !/^\s*(import|\*|\/\/|\/\*\*)/.test(line))
          .filter(({ line }) => /\b(ViewContext|EngineView|ServiceContext|SeedContext)\b/.test(line.replace(/\b(Pick|Omit)<(ViewContext|EngineView), /g, ""))),
      );
    expect(whole.map((x) => `${x.at}: ${x.line.trim()}`)).toEqual([]);
  });

  // A service's build and seed are given the whole context by the wiring (ServiceDef); each names
  // what it reads of it (BuildReach<{ storage, config, engine, services }>, SeedReach<...>).
  /** Each build or seed of `text` whose context parameter names no reach: left untyped, or typed whole. */
  function wholeContexts(file: string, text: string): string[] {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const found: string[] = [];
    const visit = (node: ts.Node) => {
      const named = (ts.isPropertyAssignment(node) || ts.isMethodDeclaration(node)) && ts.isIdentifier(node.name) ? node.name.text : undefined;
      const value = ts.isPropertyAssignment(node) ? node.initializer : undefined;
      const fn = ts.isMethodDeclaration(node) ? node : value && (ts.isArrowFunction(value) || ts.isFunctionExpression(value)) ? value : undefined;
      if (fn && (named === "build" || named === "seed")) {
        const param = fn.parameters[named === "build" ? 0 : 1];
        const reach = named === "build" ? "BuildReach" : "SeedReach";
        if (param && !(param.type && ts.isTypeReferenceNode(param.type) && param.type.typeName.getText() === reach)) {
          found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${named}(${param.getText().split("\n")[0]})`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    return found;
  }

  it("finds a build or seed given the whole context", () => {
    const text = [
      "const a = { build: (ctx) => ({}), seed: (m, { config }) => {} };",
      "const b = { build: (ctx: ServiceContext) => ({}), seed(m, ctx: SeedContext) {} };",
      'const c = { build: (ctx: BuildReach<{ engine: "clock" }>) => ({}), seed: (m, c: SeedReach<{ config: "pods" }>) => {}, other: (ctx) => 1 };',
      "const d = { build: () => ({}), seed: (m) => {} };",
    ].join("\n");
    expect(wholeContexts("x.ts", text)).toEqual(["x.ts:1: build(ctx)", "x.ts:1: seed({ config })", "x.ts:2: build(ctx: ServiceContext)", "x.ts:2: seed(ctx: SeedContext)"]);
  });

  it("a service's build and seed name what they read of their context (BuildReach, SeedReach)", () => {
    const found = files(join(SRC, "services"))
      .filter((f) => f.endsWith("index.ts"))
      .flatMap((f) => wholeContexts(relative(SRC, f), readFileSync(f, "utf8")));
    expect(found).toEqual([]);
  });
});

describe("better-sqlite3's native objects", () => {
  // From Node 24.19 a database, statement or iterator freed by a collection outside JavaScript
  // aborts the process (src/store/sqlite.ts): only store/sqlite.ts opens databases, and nothing
  // makes a statement of its own (`pragma()`) or an iterator.
  it("only store/sqlite.ts imports better-sqlite3 at run time", () => {
    expect(violations((i) => i.to === "better-sqlite3" && !i.typeOnly && i.from !== "store/sqlite.ts")).toEqual([]);
  });

  it("no source file calls pragma() or iterate(), or opens a Database itself", () => {
    const found = files(SRC).flatMap((f) =>
      readFileSync(f, "utf8")
        .split("\n")
        .map((line, n) => ({ line, at: `${relative(SRC, f)}:${n + 1}` }))
        .filter(({ line, at }) => /\.pragma\(|\.iterate\(|new Database\(/.test(line) && !at.startsWith("store/sqlite.ts:")),
    );
    expect(found.map((x) => `${x.at}: ${x.line.trim()}`)).toEqual([]);
  });
});

describe("the resource folders", () => {
  // docs/ARCHITECTURE.md, "One folder per resource": the same role has the same file name in
  // every services/<resource>/, and a folder keeps another file only for a concern of its own.
  const ROLES = ["index.ts", "model.ts", "record.ts", "v1.ts", "v2.ts", "graphql.ts", "config.ts"];
  // The folders are the services of the list (src/services/index.ts), named as they are; these
  // keep files of concerns of their own besides the roles'.
  const OWN: Record<string, string[]> = {
    batches: ["control.ts", "progress.ts"],
    billing: ["buckets.ts", "usage.ts"],
    catalog: ["availability.ts"],
    endpoints: ["endpoint-container.ts", "releases.ts", "workers.ts"],
    pods: ["actions.ts", "cluster-members.ts", "pod-settings.ts", "worker-pods.ts"],
    "registry-auths": ["delegations.ts", "delegations-rest.ts"],
  };
  const SERVICES_DIR = join(SRC, "services");
  const folders = readdirSync(SERVICES_DIR).filter((name) => name !== "shared" && statSync(join(SERVICES_DIR, name)).isDirectory());

  it("are the services of the list, each holding the files of the roles and of its own concerns, no other", () => {
    expect(folders.sort()).toEqual(SERVICES.map((s) => s.name).sort());
    expect(Object.keys(OWN).filter((f) => !folders.includes(f))).toEqual([]);
    const stray = folders.flatMap((f) => readdirSync(join(SERVICES_DIR, f)).filter((n) => !ROLES.includes(n) && !(OWN[f] ?? []).includes(n)).map((n) => `services/${f}/${n}`));
    expect(stray).toEqual([]);
    for (const f of folders) expect(readdirSync(join(SERVICES_DIR, f)), f).toContain("index.ts");
  });

  it("a REST view's schemas carry their version in their name (…V1Schema in v1.ts, …V2Schema in v2.ts)", () => {
    const unversioned = folders.flatMap((f) =>
      ["v1", "v2"].flatMap((v) => {
        const path = join(SERVICES_DIR, f, `${v}.ts`);
        const text = statSync(path, { throwIfNoEntry: false }) ? readFileSync(path, "utf8") : "";
        return [...text.matchAll(/^export const (\w+Schema)\b/gm)].map((m) => m[1]!).filter((name) => !name.endsWith(`${v.toUpperCase()}Schema`)).map((name) => `services/${f}/${v}.ts: ${name}`);
      }),
    );
    expect(unversioned).toEqual([]);
  });
});

describe("one request pipeline", () => {
  const text = (file: string) => readFileSync(join(SRC, file), "utf8");
  const sources = files(SRC).map((f) => relative(SRC, f));

  it("http/pipeline.ts alone hands node's requests to Hono", () => {
    expect(violations((i) => i.to === "@hono/node-server" && !i.typeOnly && i.from !== "http/pipeline.ts")).toEqual([]);
  });

  it("minipod's server hands every request and upgrade to the pipeline", () => {
    const servers = sources.filter((f) => !f.startsWith("launch/") && /\bcreateServer\(/.test(text(f)));
    expect(servers).toEqual(["compose/emulator.ts"]);
    const emulator = text("compose/emulator.ts");
    expect(emulator).toMatch(/createServer\(\{[^}]*\}, pipeline\.request\)/);
    expect(emulator).toMatch(/server\.on\("upgrade", [^]*?pipeline\.upgrade\(req, socket, head\)/);
  });

  it("whatever answers a node request or leaves it to another is a step of the pipeline or an entry of its route table", () => {
    // A second router would be a handler that takes a request or declines it, called from outside the pipeline.
    const deciders = sources.filter((f) => /\(req: IncomingMessage, res: ServerResponse[^)]*\)(?::| =>) boolean/.test(text(f)));
    const entries = deciders.filter((f) => /implements FastEntry</.test(text(f)));
    const steps = deciders.filter((f) => !entries.includes(f) && f !== "http/route-table.ts");
    expect(entries.sort()).toEqual(["http/fast-routes.ts", "http/load-balancer/relay.ts"]);
    expect(steps.sort()).toEqual(["http/cross-origin.ts", "http/host-check.ts"]);
    // The steps (the Host allow-list, cross-origin writes) are run by the pipeline alone.
    const stepNames = steps.flatMap((f) => [...text(f).matchAll(/export function (\w+)\([^)]*\): \(req: IncomingMessage, res: ServerResponse\) => boolean/g)].map((m) => m[1]!));
    expect(stepNames.sort()).toEqual(["crossOriginGuard", "hostGuard"]);
    for (const name of stepNames) expect(sources.filter((f) => new RegExp(`import \\{[^}]*\\b${name}\\b`).test(text(f))), name).toEqual(["http/pipeline.ts"]);
    // The entries are added to the table (by the app) and run by it, never called directly.
    expect(sources.filter((f) => f !== "http/route-table.ts" && f !== "http/pipeline.ts" && /\.take\(req/.test(text(f)))).toEqual([]);
  });
});
