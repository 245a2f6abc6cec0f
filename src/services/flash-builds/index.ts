import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { problem } from "../../http/schemas.js";
import { idParams, routeHead } from "../shared/rest.js";
import { documentsOf, type ServiceDef, type BuildReach } from "../shared/service.js";
import { FLASH_BUILDS_CONFIG } from "./config.js";
import { flashBuildsGraphQL } from "./graphql.js";
import { FlashBuildService, type FlashArtifact, type FlashBuild } from "./model.js";

// What other services use of this one.
export { type FlashBuildService } from "./model.js";
export { artifactPath } from "./graphql.js";

const collections = { v2: [] } as const;

/** The Content-Length a request declares, if any. */
const declaredLength = (c: Context): number | undefined => {
  const header = c.req.header("content-length");
  return header === undefined || !/^\d+$/.test(header.trim()) ? undefined : Number(header);
};

/** An artifact's pieces as a response body, read as it is sent (one piece read per pull). */
function bodyOf(pieces: AsyncIterable<Buffer>): ReadableStream<Uint8Array> {
  const it = pieces[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await it.next();
        if (next.done) controller.close();
        else controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.byteLength));
      },
      async cancel() {
        await it.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}

const route = routeHead("Flash builds");
const params = idParams("objectKey", "artifact-5f0c…");
const answers = {
  400: problem("The body is not the size declared (tarballSize)"),
  403: problem("The upload URL expired (an hour of minipod's clock after prepareFlashArtifactUpload)"),
  404: problem("No artifact with this object key (or, for the download, none uploaded yet)"),
  409: problem("The artifact was uploaded already, or is being uploaded"),
  413: problem("More bytes than the size declared"),
};

const uploadRoute = createRoute({
  ...route("put", "/flash/artifacts/{objectKey}", "uploadFlashArtifact", "Upload a Flash build's artifact (the uploadUrl of prepareFlashArtifactUpload)"),
  description: "The tar.gz of `flash deploy` or `rp flash deploy`, exactly the `tarballSize` declared (at most 64 MB), once; no key: the object key is the secret, as a presigned URL's signature is.",
  request: { params },
  responses: { 200: { description: "Kept" }, ...answers },
});

const downloadRoute = createRoute({
  ...route("get", "/flash/artifacts/{objectKey}", "downloadFlashArtifact", "Download a Flash build's artifact"),
  description: "What a deployed app's worker fetches (an environment's `activeArtifact.downloadUrl`).",
  request: { params },
  responses: { 200: { description: "The tar.gz", content: { "application/gzip": { schema: z.string().openapi({ format: "binary" }) } } }, 404: answers[404] },
});

/**
 * Flash builds (GraphQL) and their artifacts: `PUT /flash/artifacts/{objectKey}`, the upload URL
 * `prepareFlashArtifactUpload` hands out (no key: the object key is the secret, as in a presigned
 * URL), and `GET` of the same, from which a deployed endpoint's workers fetch it.
 */
export const flashBuilds: ServiceDef<"flash-builds", { flashBuilds: FlashBuildService }, typeof collections, typeof FLASH_BUILDS_CONFIG> = {
  name: "flash-builds",
  collections,
  config: FLASH_BUILDS_CONFIG,
  graphql: flashBuildsGraphQL,
  build: (ctx: BuildReach<{ storage: "documents" | "pieces"; config: "flashBuildsPerApp"; engine: "clock"; services: "flashApps" | "flashEnvironments" }>) => ({
    flashBuilds: new FlashBuildService({
      ...documentsOf<FlashBuild>(ctx, "flash-build"),
      artifacts: ctx.documents<FlashArtifact>("flash-artifact"),
      pieces: ctx.pieces("flash-artifact"),
      app: (appId) => void ctx.services.flashApps.get(appId),
      perApp: ctx.config.flashBuildsPerApp,
      // Environments are a later service's: read on requests only.
      deployed: () => new Set(ctx.services.flashEnvironments.list().flatMap((e) => (e.activeBuildId === undefined ? [] : [e.activeBuildId]))),
    }),
  }),
  // The documents and their pieces are emptied or replaced: an upload under way writes no more.
  clear: ({ flashBuilds }) => flashBuilds.forgetWork(),
  restored: ({ flashBuilds }) => flashBuilds.forgetWork(),
  resume: ({ flashBuilds }) => flashBuilds.resumeDeletions(),
  routes: (app, { flashBuilds }) => {
    app.openapi(uploadRoute, async (c) => {
      const body = c.req.raw.body as unknown as AsyncIterable<Uint8Array> | null;
      await flashBuilds.upload(c.req.valid("param").objectKey, body ?? undefined, declaredLength(c));
      return c.body(null, 200);
    });
    app.openapi(downloadRoute, (c) => {
      const { size, pieces } = flashBuilds.download(c.req.valid("param").objectKey);
      return c.body(bodyOf(pieces), 200, { "content-type": "application/gzip", "content-length": String(size) });
    });
  },
};
