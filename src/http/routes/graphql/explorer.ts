import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { EmulatorError } from "../../../domain/errors.js";
import { assetUrl } from "../../assets/index.js";
import type { AppEnv } from "../../env.js";
import { ERROR_RESPONSES } from "../../schemas.js";

const TAG = "Dashboard";
const require = createRequire(import.meta.url);

/**
 * GraphiQL for `/graphql`, from installed packages and never a CDN: graphiql 3's prebuilt browser
 * bundle (`graphiql.min.js`, its stylesheet) on React 18's browser builds. Version 3 is the last
 * whose package ships such a bundle; later ones need a bundler.
 */
const PACKAGE_FILES: Record<string, { pkg: string; path: string }> = {
  "react.production.min.js": { pkg: "react", path: "umd/react.production.min.js" },
  "react-dom.production.min.js": { pkg: "react-dom", path: "umd/react-dom.production.min.js" },
  "graphiql.min.js": { pkg: "graphiql", path: "graphiql.min.js" },
  "graphiql.min.css": { pkg: "graphiql", path: "graphiql.min.css" },
};

const DEFAULT_QUERY = `# minipod's GraphQL API: the service's, for its Python library, CLI and MCP server.
# The public catalog needs no key; for your account put one in the Headers tab below:
#   { "Authorization": "Bearer <your API key>" }
# The docs (top left) list every type.
query MyPods {
  myself {
    id
    pods { id name desiredStatus costPerHr }
    endpoints { id name gpuIds workersMax }
  }
}
`;

/**
 * GraphiQL 3 stores its tabs 500 ms after it renders, and the query editor's text 100 ms after
 * that editor settles (its schema loaded), which on a busy machine comes later. A page reloaded
 * between the two finds tabs but no query; GraphiQL then opens a new, empty tab over the stored
 * ones (later GraphiQL fixed this, but ships no prebuilt bundle). Before it starts, the active
 * tab's own text is stored as the query, so GraphiQL finds that tab and reopens it.
 */
const INIT_JS = `(function () {
  try {
    var state = JSON.parse(localStorage.getItem("graphiql:tabState"));
    var active = state && Array.isArray(state.tabs) ? state.tabs[state.activeTabIndex] : null;
    if (active && active.query && localStorage.getItem("graphiql:query") === null) localStorage.setItem("graphiql:query", active.query);
  } catch (e) {
    // No storage, or not GraphiQL's: it starts afresh on its default query.
  }
  var fetcher = GraphiQL.createFetcher({ url: "/graphql" });
  var root = ReactDOM.createRoot(document.getElementById("graphiql"));
  root.render(React.createElement(GraphiQL, {
    fetcher: fetcher,
    defaultQuery: ${JSON.stringify(DEFAULT_QUERY)},
    defaultEditorToolsVisibility: "headers"
  }));
})();
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>minipod GraphQL explorer</title>
<link rel="icon" href="${assetUrl("icon.svg")}" type="image/svg+xml">
<link rel="stylesheet" href="/docs/graphql/assets/graphiql.min.css">
<style>html, body, #graphiql { height: 100%; margin: 0; }</style>
</head>
<body>
<div id="graphiql">Loading GraphiQL…</div>
<script src="/docs/graphql/assets/react.production.min.js"></script>
<script src="/docs/graphql/assets/react-dom.production.min.js"></script>
<script src="/docs/graphql/assets/graphiql.min.js"></script>
<script src="/docs/graphql/assets/init.js"></script>
</body>
</html>
`;

/** GraphiQL talks only to the emulator; it styles itself inline and with data: fonts and icons. */
export const EXPLORER_CSP =
  "default-src 'self'; img-src 'self' data:; font-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const TYPES: Record<string, string> = { js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8" };

const page = createRoute({
  method: "get",
  path: "/docs/graphql",
  operationId: "graphqlExplorer",
  tags: [TAG],
  summary: "GraphQL explorer (GraphiQL)",
  description: "GraphiQL over /graphql, served from the installed graphiql package (its prebuilt bundle) with React's browser builds.",
  responses: { 200: { description: "The explorer page", content: { "text/html": { schema: z.string() } } } },
});

const asset = createRoute({
  method: "get",
  path: "/docs/graphql/assets/{file}",
  operationId: "graphqlExplorerAsset",
  tags: [TAG],
  summary: "GraphiQL's files",
  request: { params: z.object({ file: z.string().openapi({ param: { name: "file", in: "path" }, example: "graphiql.min.css" }) }) },
  responses: { 200: { description: "The file", content: { "text/javascript": { schema: z.string() }, "text/css": { schema: z.string() } } }, 404: ERROR_RESPONSES[404] },
});

/** `GET /docs/graphql` and its assets. */
export function graphqlExplorerRoutes(router: OpenAPIHono<AppEnv>): void {
  const cache = new Map<string, Buffer>();
  router.openapi(page, (c) => c.body(PAGE, 200, { "content-type": "text/html; charset=utf-8", "content-security-policy": EXPLORER_CSP, "cache-control": "no-cache" }));
  router.openapi(asset, (c) => {
    const file = c.req.valid("param").file;
    const type = TYPES[file.slice(file.lastIndexOf(".") + 1)] ?? "application/octet-stream";
    if (file === "init.js") return c.body(INIT_JS, 200, { "content-type": type, "cache-control": "no-cache" });
    const from = Object.hasOwn(PACKAGE_FILES, file) ? PACKAGE_FILES[file] : undefined;
    if (!from) throw new EmulatorError("NOT_FOUND", `no explorer asset "${file}"; there are ${[...Object.keys(PACKAGE_FILES), "init.js"].join(", ")}`);
    let body = cache.get(file);
    if (!body) cache.set(file, (body = readFileSync(join(dirname(require.resolve(`${from.pkg}/package.json`)), from.path))));
    return c.body(new Uint8Array(body), 200, { "content-type": type, "cache-control": "public, max-age=86400" });
  });
}
