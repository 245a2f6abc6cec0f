import { EmulatorError } from "../../domain/errors.js";
import { gpuType } from "../shared/catalog/gpu-catalog.js";
import { found, invalidBody } from "../shared/invalid.js";
import { type Pod, type PodCreate, type PodService, CLUSTER_CIDR, CLUSTER_TYPES, type ClusterType } from "../pods/index.js";
import type { Documents } from "../shared/storage.js";

export { CLUSTER_CIDR, CLUSTER_TYPES, type ClusterType };

/** Every pod of a cluster has the same shape: `podCount` pods of `gpuCountPerPod` GPUs of one type. */
export interface ClusterCompute {
  gpuTypeId: string;
  gpuCountPerPod: number;
  podCount: number;
}

/** A cluster: a group of identical GPU pods in one data center, made, renamed and deleted together. */
export interface Cluster {
  id: string;
  name: string;
  type: ClusterType;
  compute: ClusterCompute;
  createdAt: number;
}

export interface NewCluster {
  name: string;
  type: ClusterType;
  compute: ClusterCompute;
  /** The settings every member pod gets (image, env, ports, mounts, data centers, ...). */
  pod: Omit<PodCreate, "computeType" | "gpuTypeIds" | "gpuCount" | "cpuFlavorIds" | "vcpuCount">;
}

/** The overlay network every cluster's pods share; a member's address is its rank's. */
export class ClusterService {
  constructor(private readonly d: Documents<Cluster> & { pods: PodService }) {}

  list(): Cluster[] {
    return this.d.store.list();
  }

  get(id: string): Cluster {
    return found(this.d.store.get(id), "cluster", id);
  }

  find(id: string): Cluster | undefined {
    return this.d.store.get(id);
  }

  /** The member pods, by rank. */
  members(id: string): Pod[] {
    this.get(id);
    return this.d.pods
      .list()
      .filter((p) => p.clusterId === id)
      .sort((a, b) => (a.clusterRank ?? 0) - (b.clusterRank ?? 0));
  }

  create(input: NewCluster): Cluster {
    const { gpuTypeId, gpuCountPerPod, podCount } = input.compute;
    const gpu = gpuType(gpuTypeId);
    if (!gpu) throw invalidBody([`$.compute.gpuTypeId: unknown GPU type "${gpuTypeId}"; the ids are listed by GET /v2/catalog/gpus`]);
    if (gpuCountPerPod > gpu.maxCount.secure) {
      throw invalidBody([`$.compute.gpuCountPerPod: machines with ${gpuTypeId} have at most ${gpu.maxCount.secure} GPUs (maxCount.secure of GET /v2/catalog/gpus)`]);
    }
    const cluster: Cluster = { id: this.d.newId(), name: input.name, type: input.type, compute: input.compute, createdAt: this.d.clock.now() };
    const shape: PodCreate = { ...input.pod, computeType: "GPU", gpuTypeIds: [gpuTypeId], gpuCount: gpuCountPerPod, cloudType: "SECURE" };
    // The first member checks the settings for all: a refused body leaves nothing behind.
    const first = this.d.pods.create({ ...shape, name: `${input.name}-0` }, undefined, { clusterId: cluster.id, rank: 0 });
    const placed: PodCreate = { ...shape, dataCenterIds: [first.dataCenterId] };
    for (let rank = 1; rank < podCount; rank++) this.d.pods.create({ ...placed, name: `${input.name}-${rank}` }, undefined, { clusterId: cluster.id, rank });
    this.d.store.save(cluster);
    return cluster;
  }

  rename(id: string, name: string): Cluster {
    const cluster = { ...this.get(id), name };
    if (name.trim() === "") throw invalidBody(["$.name: expected a non-empty name"]);
    this.d.store.save(cluster);
    return cluster;
  }

  /** Deletes the cluster and terminates its pods. */
  delete(id: string): void {
    for (const p of this.members(id)) this.d.pods.delete(p.id, true);
    if (!this.d.store.delete(id)) throw new EmulatorError("NOT_FOUND", `cluster "${id}" not found`);
  }

  deleteAll(): void {
    this.d.store.deleteAll();
  }
}
