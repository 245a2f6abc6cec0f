import type { ConfigPart } from "../../config/part.js";
import { PricingConfigSchema } from "../shared/pricing-config.js";

/** Billing's part of the config: the prices of its records. */
export const BILLING_CONFIG = {
  fields: {
    pricing: PricingConfigSchema.default({}).describe("Prices of /v1/billing records (USD); defaults for anything not given"),
  },
} satisfies ConfigPart;
