import { z } from "zod";
import type { ConfigPart } from "../../config/part.js";

/** Builds kept of each Flash app unless the config says otherwise. */
export const FLASH_BUILDS_PER_APP_DEFAULT = 10;

/** Flash builds' part of the config: how many builds of an app are kept (and artifacts not built). */
export const FLASH_BUILDS_CONFIG = {
  fields: {
    flashBuildsPerApp: z
      .int()
      .min(1)
      .max(1000)
      .default(FLASH_BUILDS_PER_APP_DEFAULT)
      .describe(
        "Builds of a Flash app kept (each up to 64 MB in minipod's database): past it, a new build removes the oldest not deployed to any environment, and frees its artifact; as many artifacts no build names are kept besides, a new upload URL past them removing the oldest",
      ),
  },
} satisfies ConfigPart;
