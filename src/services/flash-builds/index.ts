import type { Context } from "hono";
import { EmulatorError } from "../../domain/errors.js";
import { documentsOf, type ServiceDef } from "../shared/service.js";
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

/**
 * Flash builds (GraphQL) and their artifacts: `PUT /flash/artifacts/{objectKey}`, the upload URL
 * `prepareFlashArtifactUpload` hands out (no key: the object key is the secret, as in a presigned
 * URL), and `GET` of the same, from which a deployed endpoint's workers fetch it.
 */
export const flashBuilds: ServiceDef<"flash-builds", { flashBuilds: FlashBuildService }, typeof collections> = {
  name: "flash-builds",
  collections,
  graphql: flashBuildsGraphQL,
  build: (ctx) => ({
    flashBuilds: new FlashBuildService({
      ...documentsOf<FlashBuild>(ctx, "flash-build"),
      artifacts: ctx.documents<FlashArtifact>("flash-artifact"),
      app: (appId) => void ctx.services.flashApps.get(appId),
    }),
  }),
  routes: (app, { flashBuilds }) => {
    const path = "/flash/artifacts/:objectKey";
    app.put(path, async (c) => {
      const key = c.req.param("objectKey");
      flashBuilds.upload(key, await bodyWithin(c, flashBuilds.expectedSize(key)));
      return c.body(null, 200);
    });
    app.get(path, (c) => {
      const bytes = flashBuilds.download(c.req.param("objectKey"));
      return c.body(new Uint8Array(bytes), 200, { "content-type": "application/gzip", "content-length": String(bytes.length) });
    });
  },
};
