import { z } from "zod";
import type { ConfigPart } from "../../config/part.js";
import { stableId } from "../shared/stable-id.js";

/**
 * Hub listings the config declares (`hub`): the repos the service's tooling (its MCP server's
 * list-hub-repos and deploy-hub-repo, over GraphQL `listings` and `saveEndpoint`) finds here.
 * minipod has no Hub of its own; a listing is what a test needs of one: a repo, its listed
 * release's image and its release config (the repo's `.runpod/hub.json`).
 */
export const HubListingConfigSchema = z.strictObject({
  repo: z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'expected "owner/name"').describe("The GitHub repo, owner/name"),
  title: z.string().min(1).optional().describe("Default: the repo's name"),
  description: z.string().default(""),
  type: z.enum(["SERVERLESS", "POD"]).default("SERVERLESS"),
  category: z.string().default("language"),
  tags: z.array(z.string()).default([]),
  imageName: z.string().min(1).describe("The listed release's built image"),
  tagName: z.string().min(1).default("v1.0.0").describe("The listed release's tag"),
  config: z.record(z.string(), z.unknown()).default({}).describe("The release config (.runpod/hub.json): gpuIds, gpuCount, containerDiskInGb, allowedCudaVersions, env[] with input schemas"),
  deploys: z.int().min(0).default(0),
});
export type HubListingConfig = z.infer<typeof HubListingConfigSchema>;

/** The catalog's part of the config. */
export const CATALOG_CONFIG = {
  fields: {
    hub: z.array(HubListingConfigSchema).default([]).describe("Hub listings the GraphQL API's `listings` answers (none by default)"),
  },
} satisfies ConfigPart;

/** A listing's id and its listed release's, the same at every start. */
export const hubIds = (l: Pick<HubListingConfig, "repo" | "tagName">) => ({ listing: stableId(`hub:${l.repo}`), release: stableId(`hub-release:${l.repo}@${l.tagName}`) });
