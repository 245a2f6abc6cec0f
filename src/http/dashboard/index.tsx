import { CONTROL_KEY_HEADER } from "../control-auth.js";
import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { EmulatorError } from "../../domain/errors.js";
import type { AppEnv } from "../env.js";
import { ERROR_RESPONSES } from "../schemas.js";
import { ASSETS, assetUrl } from "../assets/index.js";
import { DashboardPage } from "./page.js";
import { PANELS, renderPanel, type PanelContext, type PanelName, type PanelQuery } from "./panels.js";

const TAG = "Dashboard";

/** Only the emulator's own origin: a page that tried to load anything else would be refused. */
export const DASHBOARD_CSP = "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const html = (description: string) => ({ 200: { description, content: { "text/html": { schema: z.string() } } } });

const pageRoute = createRoute({
  method: "get",
  path: "/",
  operationId: "dashboard",
  tags: [TAG],
  summary: "The dashboard",
  description:
    "Endpoints and their simulated workers, live jobs, a job's detail and timeline, the virtual clock, fault rules, webhook deliveries and the request journal. Every asset is served by the emulator.",
  responses: html("The dashboard page"),
});

/** The same page where the control key's cookies reach it (they are sent to `/_dashboard` and `/_emulator` only). */
const pageUnderDashboardRoute = createRoute({
  method: "get",
  path: "/_dashboard",
  operationId: "dashboardUnlocked",
  tags: [TAG],
  summary: "The dashboard, where its control-key cookie is sent",
  description: "The page of `/`, at the path the cookie `/?key=<controlKey>` sets is sent to: where `/?key=` leads, and `/` without a key when a controlKey guards the dashboard.",
  responses: html("The dashboard page"),
});

const panelRoute = createRoute({
  method: "get",
  path: "/_dashboard/panels/{panel}",
  operationId: "dashboardPanel",
  tags: [TAG],
  summary: "One dashboard panel as an HTML fragment",
  description:
    "What the dashboard's script fetches to refresh a panel. `jobs` takes `endpoint`, `status`, `id` (a part of the job id), `offset`; `job` takes `id`; `requests` takes `endpoint`, `operation`, `status` and `workers=show` (the worker protocol's requests are left out otherwise).",
  request: {
    params: z.object({ panel: z.enum(PANELS).openapi({ param: { name: "panel", in: "path" } }) }),
    query: z.object({
      endpoint: z.string().optional(),
      status: z.string().optional(),
      operation: z.string().optional(),
      offset: z.string().optional(),
      id: z.string().optional(),
      workers: z.string().optional(),
    }),
  },
  responses: { ...html("The panel's body"), 400: ERROR_RESPONSES[400] },
});

const assetRoute = createRoute({
  method: "get",
  path: "/_dashboard/assets/{file}",
  operationId: "dashboardAsset",
  tags: [TAG],
  summary: "The dashboard's script, stylesheet and icon",
  request: { params: z.object({ file: z.string().openapi({ param: { name: "file", in: "path" }, example: "dashboard.js" }) }) },
  responses: { 200: { description: "The file", content: { "text/javascript": { schema: z.string() }, "text/css": { schema: z.string() } } }, 404: ERROR_RESPONSES[404] },
});

/** Serves the dashboard at `/`, its panels and its assets. `app` renders the panels that read other control routes. */
export function dashboardRoutes(core: PanelContext["core"], router: OpenAPIHono<AppEnv>, info: { version: string; controlKey?: string | undefined }): void {
  // Panels read other control routes in-process, with the control key when one guards them.
  const app = {
    request: (path: string, init: RequestInit = {}) =>
      router.request(path, info.controlKey ? { ...init, headers: { ...(init.headers as Record<string, string>), [CONTROL_KEY_HEADER]: info.controlKey } } : init),
  };
  const context = (query: PanelQuery): PanelContext => ({ core, app, query });

  const page = async (c: Context) => {
    const ctx = context({});
    const bodies = Object.fromEntries(await Promise.all(PANELS.map(async (p) => [p, await renderPanel(p, ctx)] as const))) as Record<PanelName, unknown>;
    const page = (
      <DashboardPage
        version={info.version}
        assets={{ css: assetUrl("dashboard.css"), js: assetUrl("dashboard.js"), icon: assetUrl("icon.svg") }}
        endpointIds={core.endpoints.specs("QUEUE").map((s) => s.id)}
        bodies={bodies as Parameters<typeof DashboardPage>[0]["bodies"]}
      />
    );
    return htmlResponse(c, `<!doctype html>${await page}`);
  };
  router.openapi(pageRoute, page as never);
  router.openapi(pageUnderDashboardRoute, page as never);

  router.openapi(panelRoute, async (c) => {
    const body = await renderPanel(c.req.valid("param").panel, context(c.req.valid("query")));
    return htmlResponse(c, String(await body));
  });

  router.openapi(assetRoute, (c) => {
    const name = c.req.valid("param").file;
    const file = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!file) throw new EmulatorError("NOT_FOUND", `no dashboard asset "${c.req.valid("param").file}"; there are ${Object.keys(ASSETS).join(", ")}`);
    // A request carrying the current hash may be cached for good; any other must revalidate.
    const immutable = c.req.query("v") === file.hash;
    return c.body(file.body, 200, { "content-type": file.type, "cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache" });
  });
}

function htmlResponse(c: Context, body: string) {
  return c.body(body, 200, { "content-type": "text/html; charset=utf-8", "content-security-policy": DASHBOARD_CSP, "cache-control": "no-store" });
}
