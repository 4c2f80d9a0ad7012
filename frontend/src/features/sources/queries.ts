import { queryOptions } from '@tanstack/react-query';
import { getSchema, listSources, sampleTable } from '@/client';

export const sourceKeys = {
  project: (projectId: string) => ['sources', 'project', projectId] as const,
  schema: (sourceId: string) => ['sources', 'schema', sourceId] as const,
  sample: (sourceId: string, schema: string, table: string) => ['sources', 'sample', sourceId, schema, table] as const,
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

/** Rows a table's sample shows (the server allows up to 50). */
export const SAMPLE_ROWS = 20;

/** A table's first rows, read from the database now (through the agent's read-only path). */
export const sampleQuery = (sourceId: string, schema: string, table: string) =>
  queryOptions({
    queryKey: sourceKeys.sample(sourceId, schema, table),
    queryFn: async () =>
      (await sampleTable({ path: { source_id: sourceId }, query: { schema: schema || undefined, table, limit: SAMPLE_ROWS } })).data!,
    // A glance at the data: read again when asked, not on every focus.
    staleTime: 60_000,
    retry: false,
    // Said where the rows would be.
    meta: { silent: true },
  });
