import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { EmulatorError } from "../../../domain/errors.js";
import { assetUrl } from "../../assets/index.js";
import type { AppEnv } from "../../env.js";
import { ERROR_RESPONSES } from "../../schemas.js";

const TAG = "Dashboard";

/**
 * Swagger UI runs from the installed `swagger-ui-dist` package, never a CDN. Its own index page is
 * not used: it points at the public petstore. `validatorUrl: null` stops it from sending the
 * document to the public validator; the standalone preset (a top bar with a URL box) is left out.
 * It reads the 3.0 rendition of /openapi.json (see serveOpenApi): the same routes, drawn 3 to 4
 * times faster.
 */
const INIT_JS = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/docs/openapi-3.0.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    docExpansion: "list",
    defaultModelsExpandDepth: 0,
    displayOperationId: true,
    displayRequestDuration: true,
    tryItOutEnabled: false
  });
});
`;

const DOCS_CSS = `body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
.docs-top { display: flex; gap: 16px; align-items: center; padding: 10px 20px; border-bottom: 1px solid #e3e6ec; font-size: 14px; }
.docs-top strong { font-size: 16px; }
.docs-top a { color: #4f46e5; text-decoration: none; }
.docs-top a:hover { text-decoration: underline; }
`;

/** The files served under /docs/assets: from the package, or our own. */
const PACKAGE_FILES = ["swagger-ui-bundle.js", "swagger-ui-bundle.js.map", "swagger-ui.css", "swagger-ui.css.map"] as const;
const OWN_FILES: Record<string, string> = { "init.js": INIT_JS, "docs.css": DOCS_CSS };

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  map: "application/json; charset=utf-8",
};

/** Swagger UI makes its own requests only to the emulator, and styles itself inline and with data: icons. */
export const DOCS_CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const require = createRequire(import.meta.url);

/** Where swagger-ui-dist is installed, and its version (part of asset URLs, for caching). */
function swaggerDist(): { dir: string; version: string } {
  const pkg = require.resolve("swagger-ui-dist/package.json");
  return { dir: dirname(pkg), version: (JSON.parse(readFileSync(pkg, "utf8")) as { version: string }).version };
}

const docsPage = createRoute({
  method: "get",
  path: "/docs",
  operationId: "docs",
  tags: [TAG],
  summary: "Interactive API reference",
  description: "Swagger UI over /openapi.json (read as its 3.0 rendition, /docs/openapi-3.0.json), served from the installed swagger-ui-dist package.",
  responses: { 200: { description: "The reference page", content: { "text/html": { schema: z.string() } } } },
});

const docsAsset = createRoute({
  method: "get",
  path: "/docs/assets/{file}",
  operationId: "docsAsset",
  tags: [TAG],
  summary: "Swagger UI's files",
  request: { params: z.object({ file: z.string().openapi({ param: { name: "file", in: "path" }, example: "swagger-ui.css" }) }) },
  responses: { 200: { description: "The file", content: { "text/javascript": { schema: z.string() }, "text/css": { schema: z.string() } } }, 404: ERROR_RESPONSES[404] },
});

/** `GET /docs` and its assets. */
export function docsRoutes(router: OpenAPIHono<AppEnv>): void {
  const dist = swaggerDist();
  const cache = new Map<string, Buffer>();
  const v = `?v=${dist.version}`;
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>minipod API reference</title>
<link rel="icon" href="${assetUrl("icon.svg")}" type="image/svg+xml">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css${v}">
<link rel="stylesheet" href="/docs/assets/docs.css${v}">
</head>
<body>
<header class="docs-top"><strong>minipod</strong><a href="/">dashboard</a><a href="/openapi.json">openapi.json</a><a href="/docs/graphql">GraphQL explorer</a></header>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js${v}"></script>
<script src="/docs/assets/init.js${v}"></script>
</body>
</html>
`;

  router.openapi(docsPage, (c) => c.body(page, 200, { "content-type": "text/html; charset=utf-8", "content-security-policy": DOCS_CSP, "cache-control": "no-cache" }));

  router.openapi(docsAsset, (c) => {
    const file = c.req.valid("param").file;
    let body: string | Buffer | undefined = Object.hasOwn(OWN_FILES, file) ? OWN_FILES[file] : undefined;
    if (body === undefined && (PACKAGE_FILES as readonly string[]).includes(file)) {
      body = cache.get(file);
      if (!body) cache.set(file, (body = readFileSync(join(dist.dir, file))));
    }
    if (body === undefined) throw new EmulatorError("NOT_FOUND", `no docs asset "${file}"; there are ${[...PACKAGE_FILES, ...Object.keys(OWN_FILES)].join(", ")}`);
    const ext = file.slice(file.lastIndexOf(".") + 1);
    // The package's files change only with its version (in the URL); ours are tiny and revalidated.
    const caching = typeof body === "string" ? "no-cache" : "public, max-age=86400";
    return c.body(typeof body === "string" ? body : new Uint8Array(body), 200, { "content-type": TYPES[ext] ?? "application/octet-stream", "cache-control": caching });
  });
}
