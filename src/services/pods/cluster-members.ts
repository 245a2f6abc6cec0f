/** What a pod that belongs to a cluster shows of it: its address in the cluster and its role. */

export const CLUSTER_TYPES = ["APPLICATION", "TRAINING", "SLURM", "RAY"] as const;
export type ClusterType = (typeof CLUSTER_TYPES)[number];

/** Every pod of a cluster has the same shape: `podCount` pods of `gpuCountPerPod` GPUs of one type. */
export const CLUSTER_CIDR = "10.65.0.0/16";
export const memberIp = (rank: number): string => `10.65.${Math.floor((rank + 2) / 256)}.${(rank + 2) % 256}`;

/** The role of a member in a SLURM or RAY cluster (rank 0 leads); none for the others. */
export function memberRole(type: ClusterType, rank: number): "SLURM_CONTROLLER" | "SLURM_COMPUTE" | "RAY_HEAD" | "RAY_WORKER" | undefined {
  if (type === "SLURM") return rank === 0 ? "SLURM_CONTROLLER" : "SLURM_COMPUTE";
  if (type === "RAY") return rank === 0 ? "RAY_HEAD" : "RAY_WORKER";
  return undefined;
}

/**
 * Clusters (`/v2/clusters`): their pods are ordinary pods of the pod model with a membership, RUNNING
 * at once and billed as the cluster's; they are changed or terminated only through their cluster.
 */
