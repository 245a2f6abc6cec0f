import { z } from "@hono/zod-openapi";

/** An integer field whose type error reads like the service's ("expected integer"). */
export const int = () => z.int({ error: (iss) => (iss.code === "invalid_type" ? "expected integer" : undefined) });

/** An integer query parameter (query values arrive as strings). */
export const intQuery = () =>
  z.coerce.number({ error: (iss) => (iss.code === "invalid_type" ? "expected integer" : undefined) }).pipe(int());

export const ProblemSchema = z
  .object({
    title: z.string().openapi({ example: "Not Found" }),
    status: z.int().openapi({ example: 404 }),
    detail: z.string().openapi({ example: 'job "abc" not found' }),
    errors: z
      .array(z.string())
      .optional()
      .openapi({ description: "Individual request-validation failures, each a location then a message", example: ["$.policy.ttl: expected integer"] }),
  })
  .openapi("ErrorResponse");

/** A JSON response of `schema` for a route's `responses`. */
export const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });

/** `{ 200: json(schema, description) }`. */
export const ok = <T extends z.ZodType>(schema: T, description: string) => ({ 200: json(schema, description) });

export const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: ProblemSchema } } });

/** The error responses every service route may give. */
export const ERROR_RESPONSES = {
  400: problem("Malformed request or parameters; `errors` lists each validation failure"),
  401: problem("API key missing, malformed or unknown"),
  403: problem("The key lacks the scope for this route"),
  404: problem("Endpoint or job not found (also: a job whose ttl or result retention ended)"),
  429: problem("Rate limit exceeded; see Retry-After"),
  500: problem("Internal error"),
} as const;

export const PAYLOAD_TOO_LARGE_RESPONSE = { 413: problem("The body is over the operation's payload limit") } as const;

const NoParametersSchema = z.object({}).openapi("NoParameters", { description: "Nothing: send {} (or no body) as application/json" });

/**
 * The body of a control route that changes state but takes no parameter: `{}` (or nothing), sent
 * as JSON like every control write (see cross-origin.ts), which /docs then sends too. Read under
 * `jsonBody(NO_PARAMETERS_LIMIT)`.
 */
export const NO_PARAMETERS_BODY = { required: false, content: { "application/json": { schema: NoParametersSchema } } };
export const NO_PARAMETERS_LIMIT = 1024;
