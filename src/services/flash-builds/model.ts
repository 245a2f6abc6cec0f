import { randomBytes } from "node:crypto";
import { EmulatorError } from "../../domain/errors.js";
import { FLASH_ARTIFACT_MAX_BYTES } from "../../domain/limits.js";
import { found, invalidBody } from "../shared/invalid.js";
import type { DocumentStore, Documents, Now } from "../shared/storage.js";

/** How long an upload URL takes the PUT, on the virtual clock (the service's presigned URLs last an hour). */
export const FLASH_UPLOAD_TTL_MS = 60 * 60 * 1000;

/**
 * An artifact upload: prepared (`prepareFlashArtifactUpload`, its size declared), then sent (the
 * PUT to its URL, the bytes kept as base64), then named by a build (`finalizeFlashArtifactUpload`).
 * Its id is the object key, a random token: the URL carries no key, as a presigned one does not.
 */
export interface FlashArtifact {
  id: string;
  appId: string;
  /** Bytes declared at prepare time. */
  size: number;
  expiresAt: number;
  /** The tar.gz, base64; absent until the PUT. */
  data?: string | undefined;
  createdAt: number;
}

/** A build: an uploaded artifact and the manifest of what it deploys. */
export interface FlashBuild {
  id: string;
  appId: string;
  objectKey: string;
  manifest: unknown;
  createdAt: number;
}

/**
 * Flash builds and their artifacts. The artifact's bytes come over HTTP (`/flash/artifacts/{objectKey}`,
 * served by minipod itself), bounded by the size declared and by FLASH_ARTIFACT_MAX_BYTES.
 */
export class FlashBuildService {
  constructor(
    private readonly d: Documents<FlashBuild> & {
      artifacts: DocumentStore<FlashArtifact>;
      clock: Now;
      /** Whether an app exists (the 404 of an unknown one). */
      app: (appId: string) => void;
    },
  ) {}

  list(): FlashBuild[] {
    return this.d.store.list();
  }

  ofApp(appId: string): FlashBuild[] {
    return this.list().filter((b) => b.appId === appId);
  }

  get(id: string): FlashBuild {
    return found(this.d.store.get(id), "flash build", id);
  }

  /** An upload URL's object key for `size` bytes of the app's next artifact. */
  prepare(appId: string, size: number): FlashArtifact {
    this.d.app(appId);
    if (!Number.isInteger(size) || size < 1 || size > FLASH_ARTIFACT_MAX_BYTES) {
      throw invalidBody([`$.tarballSize: expected the artifact's size in bytes, from 1 to ${FLASH_ARTIFACT_MAX_BYTES} (minipod keeps artifacts in its database), got ${size}`]);
    }
    const now = this.d.clock.now();
    const artifact: FlashArtifact = { id: `artifact-${randomBytes(16).toString("hex")}`, appId, size, expiresAt: now + FLASH_UPLOAD_TTL_MS, createdAt: now };
    this.d.artifacts.save(artifact);
    return artifact;
  }

  /** The upload of a prepared artifact: refused when expired, sent already, or not the size declared. */
  upload(objectKey: string, bytes: Buffer): void {
    const artifact = this.artifact(objectKey);
    if (artifact.data !== undefined) throw new EmulatorError("CONFLICT", `the artifact ${objectKey} was uploaded already; prepare another upload`);
    if (this.d.clock.now() > artifact.expiresAt) throw new EmulatorError("FORBIDDEN", `the upload URL of ${objectKey} expired; prepare another upload`);
    if (bytes.length !== artifact.size) {
      throw new EmulatorError("BAD_REQUEST", `the artifact ${objectKey} was declared as ${artifact.size} bytes (tarballSize) but ${bytes.length} were sent`);
    }
    this.d.artifacts.save({ ...artifact, data: bytes.toString("base64") });
  }

  /** The bytes a prepared upload may take at most (the size declared). */
  expectedSize(objectKey: string): number {
    return this.artifact(objectKey).size;
  }

  /** An uploaded artifact's bytes. */
  download(objectKey: string): Buffer {
    const artifact = this.artifact(objectKey);
    if (artifact.data === undefined) throw new EmulatorError("NOT_FOUND", `the artifact ${objectKey} was prepared but never uploaded`);
    return Buffer.from(artifact.data, "base64");
  }

  /** The build of an uploaded artifact (`finalizeFlashArtifactUpload`). */
  finalize(appId: string, objectKey: string, manifest: unknown): FlashBuild {
    this.d.app(appId);
    const artifact = this.artifact(objectKey);
    if (artifact.appId !== appId) throw invalidBody([`$.objectKey: the artifact ${objectKey} belongs to another flash app`]);
    if (artifact.data === undefined) throw invalidBody([`$.objectKey: nothing was uploaded to ${objectKey}: PUT the artifact to its uploadUrl first`]);
    const build: FlashBuild = { id: this.d.newId(), appId, objectKey, manifest: manifest ?? null, createdAt: this.d.clock.now() };
    this.d.store.save(build);
    return build;
  }

  /** Replaces a build's manifest (runpod-flash writes back the endpoints it provisioned). */
  updateManifest(id: string, manifest: unknown): FlashBuild {
    const build = { ...this.get(id), manifest: manifest ?? null };
    this.d.store.save(build);
    return build;
  }

  /** Deletes the builds and artifacts of an app being deleted. */
  forgetApp(appId: string): void {
    for (const b of this.ofApp(appId)) this.d.store.delete(b.id);
    for (const a of this.d.artifacts.list()) if (a.appId === appId) this.d.artifacts.delete(a.id);
  }

  private artifact(objectKey: string): FlashArtifact {
    return found(this.d.artifacts.get(objectKey), "flash artifact", objectKey);
  }
}
