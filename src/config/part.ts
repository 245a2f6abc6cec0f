import type { z } from "zod";

/**
 * A resource's part of the config file, declared in its folder (`services/<resource>/config.ts`)
 * and given with its service (`ServiceDef.config`): the config's schema is the engine's keys and
 * the parts of the services an emulator is built with (see `configSchema`).
 */
export interface ConfigPart {
  /** Its top-level keys. */
  readonly fields: z.ZodRawShape;
  /** Keys it adds to each configured endpoint (`endpoints[]`). */
  readonly endpointFields?: z.ZodRawShape;
  /** Cross-checks over the whole config (unique names, what it names of other parts), as issues at their path. */
  check?(config: never, ctx: z.RefinementCtx): void;
  /** The handler a configured endpoint that names none runs, if this part decides it (a template's). */
  endpointHandler?(config: never, endpoint: never): string | undefined;
}

/** What the config reads of a service: its REST collections (ids the config reserves, fault operations) and its part. */
export interface ConfiguredService {
  readonly collections: { readonly v1?: readonly string[]; readonly v2?: readonly string[] };
  readonly config?: ConfigPart | undefined;
}

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
/** A part's own shape; the wide `ConfigPart` of a service that declares none adds nothing. */
type Own<S> = S extends z.ZodRawShape ? (string extends keyof S ? object : S) : object;
type PartsOf<L extends readonly ConfiguredService[]> = NonNullable<L[number]["config"]>;

/** The top-level keys the parts of `L` add. */
export type FieldsOf<L extends readonly ConfiguredService[]> = UnionToIntersection<PartsOf<L> extends infer P ? (P extends { fields: infer F } ? Own<F> : object) : never> & object;
/** The keys the parts of `L` add to each configured endpoint. */
export type EndpointFieldsOf<L extends readonly ConfiguredService[]> = UnionToIntersection<
  PartsOf<L> extends infer P ? (P extends { endpointFields: infer F } ? Own<F> : object) : never
> &
  object;
