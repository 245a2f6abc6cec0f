import { z } from "zod";

const RESOURCE_ID = /^[A-Za-z0-9_-]+$/;

/** The id of a resource declared in the config: what its URLs and references name. */
export const resourceId = (what: string) => z.string().min(1).max(64).regex(RESOURCE_ID, "expected letters, digits, '_' or '-'").describe(`${what} id`);
