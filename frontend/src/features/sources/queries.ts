import { queryOptions } from '@tanstack/react-query';
import { getSchema, listSources } from '@/client';

export const sourceKeys = {
  project: (projectId: string) => ['sources', 'project', projectId] as const,
  schema: (sourceId: string) => ['sources', 'schema', sourceId] as const,
};

/** A project's data sources, by name (as the server lists them). */
export const sourcesQuery = (projectId: string) =>
  queryOptions({
    queryKey: sourceKeys.project(projectId),
    queryFn: async () => (await listSources({ path: { project_id: projectId }, query: { limit: 500 } })).data!,
  });

/** A source's tables and columns as its last check listed them, with the team's descriptions. */
export const schemaQuery = (sourceId: string) =>
  queryOptions({
    queryKey: sourceKeys.schema(sourceId),
    queryFn: async () => (await getSchema({ path: { source_id: sourceId } })).data!,
    // Said where the tables would be.
    meta: { silent: true },
  });
