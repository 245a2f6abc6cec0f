import { EMULATOR_USER_ID } from "../shared/user.js";
import { invalidBody, notFound } from "../shared/invalid.js";
import type { DocumentStore } from "../shared/storage.js";

/**
 * A delegation of pull access to an Amazon ECR repository (`/v2/registries/delegations`). minipod
 * pulls nothing: it keeps the delegation as registered, read from the repository's ARN.
 */
export interface EcrDelegation {
  id: string;
  name: string | null;
  delegatorUserId: string;
  awsUser: string;
  repository: string;
  tag: string;
  awsRegion: string;
  dockerRegistryUri: string;
  createdAt: number;
}

/** `arn:aws:ecr:<region>:<account>:repository/<name>[:<tag>]` */
const ECR_ARN = /^arn:aws[a-z-]*:ecr:([a-z0-9-]+):(\d{12}):repository\/([a-z0-9][a-z0-9._/-]*?)(?::([\w.-]+))?$/;

export class DelegationService {
  constructor(private readonly d: { store: DocumentStore<EcrDelegation>; clock: { now(): number }; newId: () => string }) {}

  list(): EcrDelegation[] {
    return this.d.store.list();
  }

  create(resource: string, name: string | null | undefined): EcrDelegation {
    const m = ECR_ARN.exec(resource);
    if (!m) throw invalidBody([`$.resource: expected an ECR repository ARN such as arn:aws:ecr:us-east-2:123456789012:repository/my/repo`]);
    const [, region, account, repository, tag] = m as unknown as [string, string, string, string, string | undefined];
    const delegation: EcrDelegation = {
      id: `deleg_${this.d.newId()}`,
      name: name ?? null,
      delegatorUserId: EMULATOR_USER_ID,
      awsUser: account,
      repository,
      tag: tag ?? "latest",
      awsRegion: region,
      dockerRegistryUri: `${account}.dkr.ecr.${region}.amazonaws.com`,
      createdAt: this.d.clock.now(),
    };
    this.d.store.save(delegation);
    return delegation;
  }

  revoke(id: string): void {
    if (!this.d.store.delete(id)) throw notFound("delegation", id);
  }

  deleteAll(): void {
    this.d.store.deleteAll();
  }
}
