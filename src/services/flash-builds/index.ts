import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { problem } from "../../http/schemas.js";
import { idParams, routeHead } from "../shared/rest.js";
import { EmulatorError } from "../../domain/errors.js";
import { documentsOf, type ServiceDef, type BuildReach } from "../shared/service.js";
import { flashBuildsGraphQL } from "./graphql.js";
import { FlashBuildService, type FlashArtifact, type FlashBuild } from "./model.js";

// What other services use of this one.
export { type FlashBuildService } from "./model.js";
export { artifactPath } from "./graphql.js";

const collections = { v2: [] } as const;

/** The request's body, refused (413) past `limit` bytes as it arrives. */
async function bodyWithin(c: Context, limit: number): Promise<Buffer> {
  const declared = Number(c.req.header("content-length") ?? "NaN");
  if (declared > limit) throw new EmulatorError("PAYLOAD_TOO_LARGE", `the artifact is ${declared} bytes, more than the ${limit} bytes declared as its tarballSize`);
  const chunks: Buffer[] = [];
  let size = 0;
  const body = c.req.raw.body;
  if (body) {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > limit) throw new EmulatorError("PAYLOAD_TOO_LARGE", `the artifact is more than the ${limit} bytes declared as its tarballSize`);
      chunks.push(Buffer.from(chunk));
    }
  }
  return Buffer.concat(chunks);
}

const route = routeHead("Flash builds");
const params = idParams("objectKey", "artifact-5f0c…");
const answers = {
  400: problem("The body is not the size declared (tarballSize)"),
  403: problem("The upload URL expired (an hour of minipod's clock after prepareFlashArtifactUpload)"),
  404: problem("No artifact with this object key (or, for the download, none uploaded yet)"),
  409: problem("The artifact was uploaded already"),
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
export const flashBuilds: ServiceDef<"flash-builds", { flashBuilds: FlashBuildService }, typeof collections> = {
  name: "flash-builds",
  collections,
  graphql: flashBuildsGraphQL,
  build: (ctx: BuildReach<{ storage: "documents"; engine: "clock"; services: "flashApps" }>) => ({
    flashBuilds: new FlashBuildService({
      ...documentsOf<FlashBuild>(ctx, "flash-build"),
      artifacts: ctx.documents<FlashArtifact>("flash-artifact"),
      app: (appId) => void ctx.services.flashApps.get(appId),
    }),
  }),
  routes: (app, { flashBuilds }) => {
    app.openapi(uploadRoute, async (c) => {
      const { objectKey } = c.req.valid("param");
      flashBuilds.upload(objectKey, await bodyWithin(c, flashBuilds.expectedSize(objectKey)));
      return c.body(null, 200);
    });
    app.openapi(downloadRoute, (c) => {
      const bytes = flashBuilds.download(c.req.valid("param").objectKey);
      return c.body(new Uint8Array(bytes), 200, { "content-type": "application/gzip", "content-length": String(bytes.length) });
    });
  },
};
