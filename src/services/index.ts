import { account } from "./account/index.js";
import { batches } from "./batches/index.js";
import { billing } from "./billing/index.js";
import { catalog } from "./catalog/index.js";
import { clusters } from "./clusters/index.js";
import { endpoints } from "./endpoints/index.js";
import { flashApps } from "./flash-apps/index.js";
import { flashBuilds } from "./flash-builds/index.js";
import { flashEnvironments } from "./flash-environments/index.js";
import { networkVolumes } from "./network-volumes/index.js";
import { pods } from "./pods/index.js";
import { registryAuths } from "./registry-auths/index.js";
import { secrets } from "./secrets/index.js";
import type { FaultRuleInputOf } from "../config/faults-schema.js";
import type { ConfigInputOf, ConfigOf, FaultOperationOf } from "../config/schema.js";
import type { ServiceDef } from "./shared/service.js";
import { templates } from "./templates/index.js";

/**
 * The management resources of the REST surface, one line each: the only list of them. The app's
 * routes, the REST collections of the path classification, fault rules' operation names, the
 * config's schema and types (each service's part), seeding, reset and restore all loop over it. Order is build and seed order: a service may use, at once, the
 * models of those above it (endpoints use templates and volumes; pods use billing's meter).
 */
export const SERVICES = [account, networkVolumes, templates, endpoints, registryAuths, secrets, billing, pods, clusters, catalog, batches, flashApps, flashBuilds, flashEnvironments] as const;

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type ModelsOf<L extends readonly ServiceDef<string, object>[]> = UnionToIntersection<{ [K in keyof L]: L[K] extends ServiceDef<string, infer M> ? M : never }[number]>;

/** Every service's models, by key: what views read and services use of each other. */
export type Services = ModelsOf<typeof SERVICES>;

/** The config of an emulator built with the list: the engine's keys and each service's part. */
export type Config = ConfigOf<typeof SERVICES>;
/** The config as a file or createEmulator gives it (defaults left out). */
export type ConfigInput = ConfigInputOf<typeof SERVICES>;
/** A name a fault rule's `operation` may take: the engine's operations and the REST collections of the list. */
export type FaultOperation = FaultOperationOf<typeof SERVICES>;
/** A fault rule as `emulator.faults.add` takes it. */
export type FaultRuleInput = FaultRuleInputOf<FaultOperation>;

type CollectionsOf<L extends readonly ServiceDef[], V extends "v1" | "v2"> = {
  [K in keyof L]: L[K]["collections"] extends { readonly [v in V]: readonly (infer C)[] } ? C : never;
}[number];

/** First path segments after `/v1` of the REST surface (its collections). */
export const REST_V1_COLLECTIONS = SERVICES.flatMap((s): readonly string[] => ("v1" in s.collections ? s.collections.v1 : [])) as CollectionsOf<typeof SERVICES, "v1">[];
/** First path segments after `/v2` that are REST collections, not endpoint ids. */
export const REST_V2_COLLECTIONS = SERVICES.flatMap((s): readonly string[] => s.collections.v2) as CollectionsOf<typeof SERVICES, "v2">[];
