import { EmulatorError } from "../../domain/errors.js";
import { argsOf, argsText, authed, badInput, commaList, conforms, envList, envRecord, given, type GraphQLPart } from "../shared/graphql.js";
import { CreateTemplateV1Schema, UpdateTemplateV1Schema } from "./v1.js";
import type { Template, TemplateCategory, TemplateChange } from "./model.js";
import type { ViewContext } from "../shared/service.js";

/**
 * Templates as the GraphQL API shows them (`myself { podTemplates }`, `saveTemplate`,
 * `deleteTemplate`): the templates of `/v1/templates` and `/v2/templates`, through the same model.
 * The public catalog (`podTemplates`) is empty, as `/v2/catalog/templates` is.
 */
const typeDefs = /* GraphQL */ `
type PodTemplate {
  id: String!
  name: String!
  imageName: String
  """The container's command, one string."""
  dockerArgs: String
  containerDiskInGb: Int
  volumeInGb: Int
  volumeMountPath: String
  """Comma-separated, as 8888/http,22/tcp."""
  ports: String
  env: [EnvironmentVariable!]
  isServerless: Boolean
  isPublic: Boolean
  isRunpod: Boolean
  readme: String
  category: String
  containerRegistryAuthId: String
  startSsh: Boolean
  startJupyter: Boolean
  startScript: String
  advancedStart: Boolean
  """Each port of ports, as a number (names are not kept here)."""
  portsConfig: [TemplatePortConfig!]
}
type TemplatePortConfig { port: Int!  name: String }

input SaveTemplateInput {
  id: String  name: String  imageName: String  dockerArgs: String  containerDiskInGb: Int  volumeInGb: Int
  volumeMountPath: String  ports: String  env: [EnvironmentVariableInput!]  isServerless: Boolean  isPublic: Boolean
  readme: String  category: String  containerRegistryAuthId: String  startSsh: Boolean  startJupyter: Boolean
  startScript: String  advancedStart: Boolean  config: String
}

input PodTemplateInput { isRunpod: Boolean  isPublic: Boolean  category: String }

extend type User { podTemplates: [PodTemplate!]! }
extend type Query {
  """The public template catalog (none here: your own are myself { podTemplates })."""
  podTemplates(input: PodTemplateInput): [PodTemplate!]!
  """One of your templates."""
  podTemplate(id: String!): PodTemplate
}
extend type Mutation {
  saveTemplate(input: SaveTemplateInput): PodTemplate
  deleteTemplate(templateName: String!): Void
}
`;

interface SaveTemplateInput {
  id?: string | null; name?: string | null; imageName?: string | null; dockerArgs?: string | null; containerDiskInGb?: number | null;
  volumeInGb?: number | null; volumeMountPath?: string | null; ports?: string | null; env?: Array<{ key: string; value?: string | null }> | null;
  isServerless?: boolean | null; isPublic?: boolean | null; readme?: string | null; category?: string | null; containerRegistryAuthId?: string | null;
  startSsh?: boolean | null; startJupyter?: boolean | null;
}

/** A template as the GraphQL API shows it. */
export function toGraphQLTemplate(t: Template): Record<string, unknown> {
  return {
    id: t.id,
    name: t.name,
    imageName: t.imageName,
    dockerArgs: argsText(t.dockerStartCmd),
    containerDiskInGb: t.containerDiskInGb,
    volumeInGb: t.volumeInGb,
    volumeMountPath: t.volumeMountPath,
    ports: t.ports.join(","),
    portsConfig: t.ports.map((p) => ({ port: Number(p.split("/")[0]), name: null })),
    env: envList(t.env),
    isServerless: t.isServerless,
    isPublic: t.isPublic,
    isRunpod: false,
    readme: t.readme,
    category: t.category,
    containerRegistryAuthId: t.containerRegistryAuthId ?? null,
    startSsh: t.startSsh,
    startJupyter: t.startJupyter,
    startScript: null,
    advancedStart: false,
  };
}

const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

/** The input in the model's terms; `""` for the registry auth means none, as the Python library sends it. */
function changeOf(i: SaveTemplateInput): TemplateChange {
  return {
    name: given(i.name),
    imageName: opt(i.imageName),
    dockerStartCmd: argsOf(i.dockerArgs),
    containerDiskInGb: opt(i.containerDiskInGb),
    volumeInGb: opt(i.volumeInGb),
    volumeMountPath: given(i.volumeMountPath),
    ports: i.ports === null || i.ports === undefined ? undefined : (commaList(i.ports) ?? []),
    env: envRecord(i.env),
    isServerless: opt(i.isServerless),
    isPublic: opt(i.isPublic),
    readme: opt(i.readme),
    category: opt(i.category) as TemplateCategory | undefined,
    containerRegistryAuthId: i.containerRegistryAuthId === "" ? null : opt(i.containerRegistryAuthId),
    startSsh: opt(i.startSsh),
    startJupyter: opt(i.startJupyter),
  };
}

/** The templates' part of the GraphQL API. */
export const templatesGraphQL: GraphQLPart<Pick<ViewContext, "templates">> = {
  typeDefs,
  resolvers: ({ templates }) => ({
    User: { podTemplates: authed(() => templates.list({ includeBound: false }).map(toGraphQLTemplate)) },
    Query: {
      podTemplates: () => [],
      podTemplate: authed<{ id: string }, unknown>(({ id }) => toGraphQLTemplate(templates.get(id))),
    },
    Mutation: {
      // With an id, a change of that template (the service's saveTemplate does both).
      saveTemplate: authed<{ input?: SaveTemplateInput | null }, unknown>(({ input }) => {
        const i = input ?? {};
        const change = changeOf(i);
        conforms(given(i.id) ? UpdateTemplateV1Schema : CreateTemplateV1Schema, { ...change });
        if (given(i.id)) return toGraphQLTemplate(templates.update(i.id!, change));
        if (change.name === undefined || change.imageName === undefined) throw badInput(["name, imageName: a new template needs both"]);
        const defined = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined && v !== null));
        return toGraphQLTemplate(templates.create({ ...defined, name: change.name, imageName: change.imageName }));
      }),
      // The service deletes a template by its name.
      deleteTemplate: authed<{ templateName: string }, null>(({ templateName }) => {
        const t = templates.list({ includeBound: false }).find((x) => x.name === templateName);
        if (!t) throw new EmulatorError("NOT_FOUND", `template named "${templateName}" not found`);
        templates.delete(t.id);
        return null;
      }),
    },
  }),
};
