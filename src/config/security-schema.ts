import { z } from "zod";
import {
  SNAPSHOTS_MAX_BYTES_DEFAULT,
  SNAPSHOTS_MAX_BYTES_LIMIT,
  SNAPSHOTS_MAX_COUNT_DEFAULT,
  SNAPSHOTS_MAX_COUNT_LIMIT,
} from "../domain/bounds.js";

/** A host name as a Host header carries it (without the port), or `.domain` for it and every subdomain. */
const HOST_PATTERN = /^(?:\.?[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?|\[[0-9a-f:.]+\])$/i;

/** One allowed host; lower-cased, as Host headers are compared. */
export const AllowedHostSchema = z
  .string()
  .regex(HOST_PATTERN, 'expected a host name such as "minipod.internal", ".example.test" (it and its subdomains) or an address such as "10.0.0.5" or "[fd00::5]", without a port')
  .transform((h) => h.toLowerCase());

export const AllowedHostsSchema = z.union([z.literal("all"), z.array(AllowedHostSchema)]);

/** Requests from other hosts and their bounds: `allowedHosts` and `snapshots`. */
export const SECURITY_CONFIG = {
  allowedHosts: AllowedHostsSchema.default([]).describe(
    'Host names minipod answers besides its bound address, localhost, 127.0.0.1 and [::1] (a page on any other name is refused: DNS rebinding); ".example.test" allows a domain and its subdomains; "all" turns the check off',
  ),
  snapshots: z
    .strictObject({
      maxCount: z.int().min(1).max(SNAPSHOTS_MAX_COUNT_LIMIT).default(SNAPSHOTS_MAX_COUNT_DEFAULT).describe("Snapshots held in memory at once"),
      maxBytes: z.int().min(1).max(SNAPSHOTS_MAX_BYTES_LIMIT).default(SNAPSHOTS_MAX_BYTES_DEFAULT).describe("Total bytes of the snapshots held in memory"),
    })
    .default({ maxCount: SNAPSHOTS_MAX_COUNT_DEFAULT, maxBytes: SNAPSHOTS_MAX_BYTES_DEFAULT })
    .describe("Bounds of the snapshots kept in memory; past them a save is refused with 409 until one is deleted"),
} as const;
