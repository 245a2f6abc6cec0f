import { z } from "@hono/zod-openapi";

/**
 * A boolean query parameter: `true` or `false` (query values arrive as strings, and coercion
 * would read "false" as true).
 */
export const boolQuery = () =>
  z
    .enum(["true", "false"], { error: () => "expected true or false" })
    .transform((v) => v === "true")
    .optional();

/**
 * A list query parameter, given repeated (`?gpuTypeId=a&gpuTypeId=b`) or comma-separated
 * (`?gpuTypeId=a,b`), each item checked by `item`.
 */
export const listQuery = <T extends z.ZodType>(item: T) =>
  z
    .preprocess(
      (v) =>
        (Array.isArray(v) ? v : [v])
          .flatMap((s) => (typeof s === "string" ? s.split(",") : [s]))
          .map((s) => (typeof s === "string" ? s.trim() : s))
          .filter((s) => s !== ""),
      z.array(item),
    )
    .optional();

/** An RFC 3339 time (or a bare date, read as midnight UTC) as epoch ms. */
export const timeQuery = () =>
  z
    .union([z.iso.datetime({ offset: true }), z.iso.date()], { error: () => "expected an RFC 3339 date-time such as 2023-01-01T00:00:00Z" })
    .transform((v) => Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v))
    .optional();

/**
 * A query parameter that may come more than once, read as its last value: the worker library
 * appends its own `isStream` and `job_in_progress` to URLs that may already carry them.
 */
export const lastQuery = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (Array.isArray(v) ? v[v.length - 1] : v), schema);
