import { z } from "zod";
import { stableId } from "./stable-id.js";

const RESOURCE_ID = /^[A-Za-z0-9_-]+$/;

/** The id of a resource declared in the config: what its URLs and references name. */
export const resourceId = (what: string) => z.string().min(1).max(64).regex(RESOURCE_ID, "expected letters, digits, '_' or '-'").describe(`${what} id`);

/** The id a configured network volume gets: its own, or one derived from what it declares (endpoints and pods name it). */
export const configVolumeId = (v: { id?: string | undefined; name: string; dataCenter: string }): string => v.id ?? stableId(`network-volume:${v.name}:${v.dataCenter}`);

/** The id a configured registry auth gets: its own, or one derived from its name (pods name it). */
export const configRegistryAuthId = (a: { id?: string | undefined; name: string }): string => a.id ?? stableId(`registry-auth:${a.name}`);
