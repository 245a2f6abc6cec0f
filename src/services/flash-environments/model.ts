import { EmulatorError } from "../../domain/errors.js";
import { found, invalidBody } from "../shared/invalid.js";
import type { Documents } from "../shared/storage.js";

/** An environment of a Flash app (`default`, `production`...): its endpoints run its active build. */
export interface FlashEnvironment {
  id: string;
  appId: string;
  name: string;
  /** The build `deployBuildToEnvironment` made active; absent before the first deploy. */
  activeBuildId?: string | undefined;
  createdAt: number;
}

/** An endpoint of an environment, as this service needs it. */
export interface EnvironmentEndpoint {
  id: string;
  name: string;
  flashEnvironmentId: string | undefined;
}

/** The builds, apps and endpoints environments tie together (other services' models, read on requests). */
export interface EnvironmentLinks {
  app(appId: string): { id: string; name: string };
  appByName(name: string): { id: string; name: string };
  /** The build's app, or the 404 of an unknown build. */
  buildApp(buildId: string): string;
  buildObjectKey(buildId: string): string;
  endpoints(): EnvironmentEndpoint[];
  deleteEndpoint(id: string): void;
}

/**
 * Flash environments, unique by name within their app. `deploy` makes a build the active one: the
 * endpoints of the environment (those saved with its `flashEnvironmentId`) run it from then on,
 * their workers started afresh with its artifact. Deleting an environment deletes its endpoints.
 */
export class FlashEnvironmentService {
  constructor(private readonly d: Documents<FlashEnvironment> & EnvironmentLinks) {}

  list(): FlashEnvironment[] {
    return this.d.store.list();
  }

  ofApp(appId: string): FlashEnvironment[] {
    return this.list().filter((e) => e.appId === appId);
  }

  get(id: string): FlashEnvironment {
    return found(this.d.store.get(id), "flash environment", id);
  }

  /** The app's environment of this name; "not found" is how the clients tell one to create. */
  byName(appId: string, name: string): FlashEnvironment {
    const app = this.d.app(appId);
    const env = this.ofApp(appId).find((e) => e.name === name);
    if (!env) throw new EmulatorError("NOT_FOUND", `flash environment not found: app "${app.name}" has no environment named "${name}"`);
    return env;
  }

  create(appId: string, name: string): FlashEnvironment {
    const app = this.d.app(appId);
    if (name.trim() === "") throw invalidBody(["$.name: expected a non-empty environment name"]);
    if (this.ofApp(appId).some((e) => e.name === name)) throw new EmulatorError("CONFLICT", `flash app "${app.name}" has an environment named "${name}" already`);
    const env: FlashEnvironment = { id: this.d.newId(), appId, name, createdAt: this.d.clock.now() };
    this.d.store.save(env);
    return env;
  }

  /** Makes a build of the environment's app its active one. */
  deploy(id: string, buildId: string): FlashEnvironment {
    const env = this.get(id);
    if (this.d.buildApp(buildId) !== env.appId) throw invalidBody([`$.flashBuildId: build ${buildId} is not a build of the environment's app`]);
    const deployed = { ...env, activeBuildId: buildId };
    this.d.store.save(deployed);
    return deployed;
  }

  endpoints(id: string): EnvironmentEndpoint[] {
    return this.d.endpoints().filter((e) => e.flashEnvironmentId === id);
  }

  /** The object key of the artifact an endpoint's workers run: its environment's active build's. */
  artifactOf(endpointFlashEnvironmentId: string | undefined): string | undefined {
    const env = endpointFlashEnvironmentId === undefined ? undefined : this.d.store.get(endpointFlashEnvironmentId);
    return env?.activeBuildId === undefined ? undefined : this.d.buildObjectKey(env.activeBuildId);
  }

  activeObjectKey(env: FlashEnvironment): string | undefined {
    return env.activeBuildId === undefined ? undefined : this.d.buildObjectKey(env.activeBuildId);
  }

  /**
   * The endpoint a call to a deployed app goes to: the one named `endpoint` (a trailing `-fb`, which
   * runpod-flash may add, aside) in the environment `envName` of the app `appName`.
   */
  resolve(appName: string, envName: string, endpoint: string): string {
    const app = this.d.appByName(appName);
    const env = this.ofApp(app.id).find((e) => e.name === envName);
    const strip = (name: string) => name.replace(/(-fb)+$/, "");
    const found = env && this.endpoints(env.id).find((e) => strip(e.name) === strip(endpoint));
    if (!found) throw new EmulatorError("ENDPOINT_NOT_FOUND", `endpoint "${endpoint}" not found in app "${appName}" environment "${envName}": deploy it first (flash deploy, rp flash deploy)`);
    return found.id;
  }

  delete(id: string): void {
    this.get(id);
    for (const e of this.endpoints(id)) this.d.deleteEndpoint(e.id);
    this.d.store.delete(id);
  }

  /** Deletes the environments (and their endpoints) of an app being deleted. */
  forgetApp(appId: string): void {
    for (const e of this.ofApp(appId)) this.delete(e.id);
  }
}
