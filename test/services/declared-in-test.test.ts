import { z } from "@hono/zod-openapi";
import { afterEach, describe, expect, it } from "vitest";
import type { ConfigPart } from "../../src/config/part.js";
import { SERVICES } from "../../src/services/index.js";
import { serveResource, V1, V2, withBody, type ResourceRoutes } from "../../src/services/shared/rest.js";
import type { ServiceDef, ViewContext } from "../../src/services/shared/service.js";
import type { DocumentStore } from "../../src/services/shared/storage.js";
import { inProcess, type InProcess } from "../support/in-process.js";

// A resource that exists only in this file: one folder's worth (model, storage, v1 and v2 views,
// seed) and one line added to the list. Nothing else of minipod knows it.

interface Widget {
  id: string;
  name: string;
  createdAt: number;
}

class Widgets {
  constructor(
    private readonly store: DocumentStore<Widget>,
    private readonly now: () => number,
  ) {}
  list = () => this.store.list();
  get = (id: string) => this.store.get(id) ?? notFound(id);
  create(name: string, id = `w-${this.store.list().length + 1}-${this.now()}`): Widget {
    const w = { id, name, createdAt: this.now() };
    this.store.save(w);
    return w;
  }
  delete(id: string): void {
    if (!this.store.delete(id)) notFound(id);
  }
}

function notFound(id: string): never {
  throw Object.assign(new Error(`no widget ${id}`), { name: "EmulatorError", code: "NOT_FOUND" });
}

const WidgetSchema = z.object({ id: z.string(), name: z.string() });
const NewWidget = z.object({ name: z.string().min(1) });
const widgetsOf = (v: ViewContext) => (v as unknown as { widgets: Widgets }).widgets;
const show = (_v: ViewContext, w: Widget) => ({ id: w.id, name: w.name });

const widgetRoutes: ResourceRoutes<Widget, ViewContext> = {
  tag: "Widgets",
  noun: "widget",
  list: (v) => widgetsOf(v).list(),
  get: (v, id) => widgetsOf(v).get(id),
  delete: (v, id) => widgetsOf(v).delete(id),
  views: [
    {
      version: V2,
      path: "widgets",
      names: { one: "Widget", many: "Widgets" },
      listKey: "widgets",
      schema: WidgetSchema,
      show,
      create: withBody(NewWidget, (v, body) => widgetsOf(v).create(body.name)),
    },
    { version: V1, path: "widgets", names: { one: "Widget", many: "Widgets" }, schema: WidgetSchema, show, create: withBody(NewWidget, (v, body) => widgetsOf(v).create(body.name)) },
  ],
};

// Its part of the config: a key of its own, and a cross-check.
const WidgetConfigSchema = z.strictObject({ name: z.string().min(1) });
const WIDGETS_CONFIG = {
  fields: { widgets: z.array(WidgetConfigSchema).default([]) },
  check: (config: { widgets: Array<{ name: string }> }, ctx: z.RefinementCtx) =>
    config.widgets.forEach((w, i) => {
      if (config.widgets.findIndex((o) => o.name === w.name) < i) ctx.addIssue({ code: "custom", message: `duplicate widget "${w.name}"`, path: ["widgets", i, "name"] });
    }),
} satisfies ConfigPart;

const collections = { v1: ["widgets"], v2: ["widgets"] } as const;
const widgets: ServiceDef<"widgets", { widgets: Widgets }, typeof collections, typeof WIDGETS_CONFIG> = {
  name: "widgets",
  collections,
  config: WIDGETS_CONFIG,
  build: (ctx) => ({ widgets: new Widgets(ctx.documents<Widget>("widget"), () => ctx.engine.clock.now()) }),
  routes: (app, views) => serveResource(views, app, widgetRoutes),
  graphql: {
    typeDefs: `type Widget { id: String!  name: String }
      extend type User { widgets: [Widget!]! }
      extend type Mutation { saveWidget(name: String!): Widget }`,
    resolvers: (v) => ({
      User: { widgets: () => widgetsOf(v).list() },
      Mutation: { saveWidget: (_p, args) => widgetsOf(v).create(String(args.name)) },
    }),
  },
  seed: ({ widgets }, { config }) => {
    if (!widgets.list().some((w) => w.id === "w-seeded")) widgets.create("declared at start", "w-seeded");
    // (The type of a config knows the services of the list only.)
    for (const w of (config as unknown as { widgets: Array<{ name: string }> }).widgets) widgets.create(w.name);
  },
};

let e: InProcess | undefined;
afterEach(() => e?.close());

const names = async (version: "v1" | "v2") => {
  const res = await e!.get(`/${version}/widgets`);
  expect(res.status).toBe(200);
  const list = (version === "v2" ? res.body.widgets : res.body) as Array<{ name: string }>;
  return list.map((w) => w.name);
};

describe("a resource declared in a test alone, added to the list", () => {
  it("is served on v1, v2 and GraphQL, classified as REST, seeded, reset and snapshotted", async () => {
    e = await inProcess({}, { services: [...SERVICES, widgets] });
    expect(await names("v2")).toEqual(["declared at start"]);

    const created = await e.post("/v2/widgets", { name: "made on v2" });
    expect(created.status).toBe(201);
    expect((await e.get(`/v1/widgets/${created.body.id}`)).body).toEqual({ id: created.body.id, name: "made on v2" });
    expect((await e.post("/v1/widgets", { name: "made on v1" })).status).toBe(200);
    expect(await names("v1")).toEqual(["declared at start", "made on v2", "made on v1"]);
    expect((await e.post("/v2/widgets", { name: "" })).status).toBe(400);

    // Its collection is REST, not an endpoint's queue.
    expect(e.core.paths.classify("GET", "/v2/widgets").surface).toBe("rest");
    expect(e.core.paths.classify("POST", "/v2/widgets").scope).toBe("rest:write");

    // Its collection is an operation fault rules name, through the control API and the config.
    expect((await e.post("/_emulator/faults", { operation: "widgets", fault: { type: "http", status: 503 } })).status).toBe(200);
    expect((await e.get("/v2/widgets")).status).toBe(503);
    await e.request("DELETE", "/_emulator/faults");
    // (The type of a config knows the services of the list only.)
    const faulted = await inProcess({ config: { faults: [{ operation: "widgets" as "pods", fault: { type: "http", status: 502 } }] } }, { services: [...SERVICES, widgets] });
    expect((await faulted.get("/v1/widgets")).status).toBe(502);
    faulted.close();

    // In the document the app serves.
    const doc = (await e.get("/openapi.json")).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v2/widgets", "/v2/widgets/{id}", "/v1/widgets", "/v1/widgets/{id}"]));

    // Its GraphQL part joins the schema: the same widgets, either way.
    const saved = await e.post("/graphql", { query: 'mutation { saveWidget(name: "made on GraphQL") { id } }' });
    expect((await e.get(`/v2/widgets/${saved.body.data.saveWidget.id}`)).body.name).toBe("made on GraphQL");
    const listed = await e.post("/graphql", { query: "{ myself { widgets { name } } }" });
    expect(listed.body).toEqual({ data: { myself: { widgets: [{ name: "declared at start" }, { name: "made on v2" }, { name: "made on v1" }, { name: "made on GraphQL" }] } } });
    await e.request("DELETE", `/v2/widgets/${saved.body.data.saveWidget.id}`);

    // Snapshotted: a restore brings back what the snapshot held, and nothing of the config over it.
    expect((await e.post("/_emulator/snapshots/two")).status).toBe(200);
    await e.post("/v2/widgets", { name: "after the snapshot" });
    expect((await e.request("DELETE", "/v2/widgets/w-seeded")).status).toBe(204);
    expect((await e.post("/_emulator/snapshots/two/restore")).status).toBe(200);
    expect(await names("v2")).toEqual(["declared at start", "made on v2", "made on v1"]);

    // Reset: back to what start declared.
    expect((await e.post("/_emulator/reset")).status).toBe(200);
    expect(await names("v2")).toEqual(["declared at start"]);
  });

  it("is an id the config reserves: no endpoint may take it", async () => {
    await expect(inProcess({ config: { endpoints: [{ id: "widgets" }] } }, { services: [...SERVICES, widgets] })).rejects.toThrow(
      /endpoints\[0\]\.id: endpoint id "widgets" is reserved: \/v2\/widgets is a resource of the REST surface/,
    );
    e = await inProcess({ config: { endpoints: [{ id: "widgets" }] } });
    expect(e.core.paths.classify("GET", "/v2/widgets/run").surface).toBe("queue");
  });

  it("declares its part of the config in its folder: the config of an emulator built with it takes the part's keys and checks", async () => {
    const config = { widgets: [{ name: "from the config" }] } as never;
    e = await inProcess({ config }, { services: [...SERVICES, widgets] });
    expect(await names("v2")).toEqual(["declared at start", "from the config"]);
    await expect(inProcess({ config: { widgets: [{ name: "a" }, { name: "a" }] } as never }, { services: [...SERVICES, widgets] })).rejects.toThrow(/widgets\[1\]\.name: duplicate widget "a"/);
    await expect(inProcess({ config })).rejects.toThrow(/widgets/);
  });

  it("is absent from an emulator built on the list alone", async () => {
    e = await inProcess();
    expect(e.core.paths.classify("GET", "/v2/widgets").surface).toBe("queue");
    expect((await e.get("/v1/widgets")).status).toBe(404);
    expect((await e.post("/graphql", { query: "{ myself { widgets { name } } }" })).status).toBe(400);
  });
});
