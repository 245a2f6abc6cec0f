import { z } from "zod";
import { SCOPES } from "../domain/operations.js";

export const ApiKeyConfigSchema = z.strictObject({
  key: z
    .string()
    .min(1)
    .regex(/^\S+$/, "expected a key without spaces (it is sent as `Authorization: Bearer <key>`)")
    .describe("The API key clients send as `Authorization: Bearer <key>` (queue operations also accept the bare key)"),
  scopes: z
    .array(z.enum(SCOPES))
    .optional()
    .describe(`What the key may do: ${SCOPES.join(", ")}. Absent: everything; [] : nothing (every route answers 403)`),
  rateLimitExempt: z.boolean().default(false).describe("No REST rate limits and no RateLimit headers for this key"),
});

export const AuthConfigSchema = z
  .strictObject({
    keys: z
      .array(ApiKeyConfigSchema)
      .default([])
      .describe("Accepted API keys. None configured: any non-empty key is accepted with every scope"),
  })
  .superRefine((auth, ctx) => {
    const seen = new Set<string>();
    auth.keys.forEach((k, i) => {
      // The message names the position only: a key is a secret and never appears in a message.
      if (seen.has(k.key)) ctx.addIssue({ code: "custom", message: "duplicate API key (the same key is listed earlier)", path: ["keys", i, "key"] });
      seen.add(k.key);
    });
  });

export type AuthConfig = z.infer<typeof AuthConfigSchema>;
