import { randomBytes } from "node:crypto";
import { EmulatorError } from "../../domain/errors.js";
import { FLASH_ARTIFACT_MAX_BYTES } from "../../domain/limits.js";
import { found, invalidBody } from "../shared/invalid.js";
import type { DocumentStore, Documents, Now, PieceStore } from "../shared/storage.js";

/** How long an upload URL takes the PUT, on the virtual clock (the service's presigned URLs last an hour). */
export const FLASH_UPLOAD_TTL_MS = 60 * 60 * 1000;

/** Bytes of a piece of an artifact (each its own row, written and read on a turn of its own). */
export const FLASH_ARTIFACT_PIECE_BYTES = 1024 * 1024;

/**
 * An artifact upload: prepared (`prepareFlashArtifactUpload`, its size declared), then sent (the
 * PUT to its URL, the bytes kept in pieces as they arrive), then named by a build
 * (`finalizeFlashArtifactUpload`). Its id is the object key, a random token: the URL carries no
 * key, as a presigned one does not.
 */
export interface FlashArtifact {
  id: string;
  appId: string;
  /** Bytes declared at prepare time. */
  size: number;
  expiresAt: number;
  /** Pieces of FLASH_ARTIFACT_PIECE_BYTES (the last one the rest) kept once the whole artifact was sent; absent until then. */
  pieces?: number | undefined;
  /** Set while its pieces are being freed (its app was deleted): it is gone for every request. */
  deleting?: true | undefined;
  /** The tar.gz, base64, as a database of an earlier minipod may hold it (kept whole in the document). */
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
      /** The artifacts' bytes, deleted with their documents. */
      pieces: PieceStore;
      clock: Now;
      /** Whether an app exists (the 404 of an unknown one). */
      app: (appId: string) => void;
      /** Builds kept of each app (`flashBuildsPerApp`). */
      perApp: number;
      /** The builds some environment has deployed (its active build): never removed to make room. */
      deployed: () => ReadonlySet<string>;
    },
  ) {}

  /** Uploads under way, by object key; each is told to stop when the database is replaced under it (`forgetWork`). */
  private readonly uploading = new Map<string, { stopped: boolean }>();
  /** Counts the times the database was reset or replaced: the deletions under way stop when it changes. */
  private epoch = 0;

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
    this.pruneUnbuilt(artifact);
    return artifact;
  }

  /**
   * Keeps `perApp` artifacts of the new one's app that no build names (prepared, uploaded or not),
   * as `prune` keeps builds: past it, the oldest are removed, their pieces freed as a build's
   * are. One being uploaded now stays until its upload ends.
   */
  private pruneUnbuilt(added: FlashArtifact): void {
    const built = new Set(this.ofApp(added.appId).map((b) => b.objectKey));
    const unbuilt = this.d.artifacts.list().filter((a) => a.appId === added.appId && !a.deleting && !built.has(a.id));
    let excess = unbuilt.length - this.d.perApp;
    if (excess <= 0) return;
    // Oldest first; the store's order among artifacts of the same instant.
    const oldest = unbuilt.map((a, i) => ({ a, i })).sort((x, y) => x.a.createdAt - y.a.createdAt || x.i - y.i);
    for (const { a } of oldest) {
      if (excess === 0) return;
      if (a.id === added.id || this.uploading.has(a.id)) continue;
      this.drop(a);
      excess--;
    }
  }

  /**
   * The upload of a prepared artifact, its bytes written a piece at a time as they arrive, each
   * piece on a turn of its own. Refused when expired, sent already (or being sent), or not the
   * size declared: by its Content-Length before anything is read, else as the bytes come; what
   * was written of a refused upload is deleted.
   */
  async upload(objectKey: string, body: AsyncIterable<Uint8Array> | undefined, declared: number | undefined): Promise<void> {
    const artifact = this.artifact(objectKey);
    if (uploaded(artifact)) throw new EmulatorError("CONFLICT", `the artifact ${objectKey} was uploaded already; prepare another upload`);
    if (this.uploading.has(objectKey)) throw new EmulatorError("CONFLICT", `the artifact ${objectKey} is being uploaded by another request; prepare another upload`);
    if (this.d.clock.now() > artifact.expiresAt) throw new EmulatorError("FORBIDDEN", `the upload URL of ${objectKey} expired; prepare another upload`);
    if (declared !== undefined && declared > artifact.size) tooLarge(objectKey, artifact.size, declared);
    if (declared !== undefined && declared < artifact.size) notTheSize(objectKey, artifact.size, declared);
    const state = { stopped: false };
    this.uploading.set(objectKey, state);
    // What an upload cut short by a stop of minipod left.
    this.d.pieces.delete(objectKey);
    try {
      const piece = Buffer.allocUnsafe(Math.min(FLASH_ARTIFACT_PIECE_BYTES, artifact.size));
      let pieces = 0;
      let filled = 0;
      let size = 0;
      for await (const chunk of body ?? []) {
        size += chunk.length;
        if (size > artifact.size) tooLarge(objectKey, artifact.size);
        for (let at = 0; at < chunk.length; ) {
          const n = Math.min(chunk.length - at, piece.length - filled);
          piece.set(chunk.subarray(at, at + n), filled);
          filled += n;
          at += n;
          if (filled < piece.length) continue;
          this.write(state, objectKey, pieces++, piece);
          filled = 0;
          await nextTurn();
        }
      }
      if (size !== artifact.size) notTheSize(objectKey, artifact.size, size);
      if (filled > 0) this.write(state, objectKey, pieces++, piece.subarray(0, filled));
      // Its app may have been deleted meanwhile.
      const now = this.artifact(objectKey);
      this.d.artifacts.save({ ...now, pieces });
    } catch (e) {
      if (!state.stopped) this.d.pieces.delete(objectKey);
      throw e;
    } finally {
      if (this.uploading.get(objectKey) === state) this.uploading.delete(objectKey);
    }
  }

  private write(state: { stopped: boolean }, objectKey: string, index: number, bytes: Uint8Array): void {
    if (state.stopped) throw new EmulatorError("CONFLICT", `the upload of ${objectKey} was stopped: minipod's state was reset or restored while it was sent; prepare another upload`);
    this.d.pieces.put(objectKey, index, bytes);
  }

  /** Stops the uploads and deletions under way, writing nothing more: the database was reset or replaced under them. */
  forgetWork(): void {
    for (const state of this.uploading.values()) state.stopped = true;
    this.uploading.clear();
    this.epoch++;
  }

  /**
   * An uploaded artifact: its size, and its bytes a piece at a time, each read on a turn of its
   * own (it fails should the artifact be deleted while read).
   */
  download(objectKey: string): { size: number; pieces: AsyncIterable<Buffer> } {
    const artifact = this.artifact(objectKey);
    if (!uploaded(artifact)) throw new EmulatorError("NOT_FOUND", `the artifact ${objectKey} was prepared but never uploaded`);
    const { pieces, data } = artifact;
    const store = this.d.pieces;
    async function* read(): AsyncGenerator<Buffer> {
      if (data !== undefined) {
        yield Buffer.from(data, "base64");
        return;
      }
      for (let i = 0; i < (pieces ?? 0); i++) {
        if (i > 0) await nextTurn();
        const piece = store.get(objectKey, i);
        if (!piece) throw new EmulatorError("NOT_FOUND", `the artifact ${objectKey} was deleted while it was read`);
        yield piece;
      }
    }
    return { size: artifact.size, pieces: read() };
  }

  /** The build of an uploaded artifact (`finalizeFlashArtifactUpload`). */
  finalize(appId: string, objectKey: string, manifest: unknown): FlashBuild {
    this.d.app(appId);
    const artifact = this.artifact(objectKey);
    if (artifact.appId !== appId) throw invalidBody([`$.objectKey: the artifact ${objectKey} belongs to another flash app`]);
    if (!uploaded(artifact)) throw invalidBody([`$.objectKey: nothing was uploaded to ${objectKey}: PUT the artifact to its uploadUrl first`]);
    const build: FlashBuild = { id: this.d.newId(), appId, objectKey, manifest: manifest ?? null, createdAt: this.d.clock.now() };
    this.d.store.save(build);
    this.prune(build);
    return build;
  }

  /**
   * Keeps `perApp` builds of the new build's app: past it, the oldest builds that no environment
   * has deployed (nor the new one) are removed, their artifacts freed as an app's deletion frees
   * them. Deployed builds stay, even past the limit.
   */
  private prune(added: FlashBuild): void {
    const builds = this.ofApp(added.appId);
    let excess = builds.length - this.d.perApp;
    if (excess <= 0) return;
    const deployed = this.d.deployed();
    // Oldest first; the store's order among builds of the same instant.
    const oldest = builds.map((b, i) => ({ b, i })).sort((x, y) => x.b.createdAt - y.b.createdAt || x.i - y.i);
    for (const { b } of oldest) {
      if (excess === 0) return;
      if (b.id === added.id || deployed.has(b.id)) continue;
      this.d.store.delete(b.id);
      excess--;
      // Its artifact, unless another build names it too.
      if (builds.some((o) => o.id !== b.id && o.objectKey === b.objectKey && this.d.store.get(o.id))) continue;
      const artifact = this.d.artifacts.get(b.objectKey);
      if (artifact && !artifact.deleting) this.drop(artifact);
    }
  }

  /** Replaces a build's manifest (runpod-flash writes back the endpoints it provisioned). */
  updateManifest(id: string, manifest: unknown): FlashBuild {
    const build = { ...this.get(id), manifest: manifest ?? null };
    this.d.store.save(build);
    return build;
  }

  /**
   * Deletes the builds and artifacts of an app being deleted. An artifact is gone at once; its
   * pieces are freed one a turn (64 MB freed in one statement held a file database's event loop
   * 45 ms), its document deleted with the last of them. What a stop of minipod interrupted is
   * finished when it starts again (`resumeDeletions`).
   */
  forgetApp(appId: string): void {
    for (const b of this.ofApp(appId)) this.d.store.delete(b.id);
    for (const a of this.d.artifacts.list()) if (a.appId === appId && !a.deleting) this.drop(a);
  }

  /** Deletes an artifact: gone at once for every request, its pieces freed one a turn. */
  private drop(a: FlashArtifact): void {
    if ((a.pieces ?? 0) <= 1) {
      this.d.artifacts.delete(a.id);
      return;
    }
    this.d.artifacts.save({ ...a, deleting: true });
    void this.free(a.id, a.pieces!);
  }

  /** Frees the pieces of the artifacts being deleted when minipod stopped, or when a snapshot restored was taken. */
  resumeDeletions(): void {
    for (const a of this.d.artifacts.list()) if (a.deleting) void this.free(a.id, a.pieces ?? 0);
  }

  private async free(objectKey: string, pieces: number): Promise<void> {
    const epoch = this.epoch;
    try {
      for (let i = pieces - 1; i >= 0; i--) {
        await nextTurn();
        // Stopped when the database was reset or replaced meanwhile (a restore copying it now: the
        // artifact is then absent, or is the image's, being deleted there too, or not).
        if (this.epoch !== epoch || !this.d.artifacts.get(objectKey)?.deleting) return;
        this.d.pieces.delete(objectKey, i);
      }
      this.d.artifacts.delete(objectKey);
    } catch {
      // The database was closed meanwhile: the next start finishes it.
    }
  }

  private artifact(objectKey: string): FlashArtifact {
    const artifact = this.d.artifacts.get(objectKey);
    return found(artifact?.deleting ? undefined : artifact, "flash artifact", objectKey);
  }
}

const uploaded = (a: FlashArtifact): boolean => a.pieces !== undefined || a.data !== undefined;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function tooLarge(objectKey: string, limit: number, declared?: number): never {
  const what = declared === undefined ? `more than the ${limit} bytes` : `${declared} bytes, more than the ${limit} bytes`;
  throw new EmulatorError("PAYLOAD_TOO_LARGE", `the artifact ${objectKey} is ${what} declared as its tarballSize`);
}

function notTheSize(objectKey: string, declared: number, sent: number): never {
  throw new EmulatorError("BAD_REQUEST", `the artifact ${objectKey} was declared as ${declared} bytes (tarballSize) but ${sent} were sent`);
}
