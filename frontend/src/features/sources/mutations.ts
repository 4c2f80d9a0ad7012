import { useMutation, useQueryClient } from '@tanstack/react-query';
import {
  checkSource,
  createSource,
  deleteSource,
  describeSchema,
  updateSource,
  type SchemaPatch,
  type SourceCreate,
  type SourceUpdate,
} from '@/client';
import { sourceKeys } from './queries';

/** Adds a source; the server checks it at once (the source's status says how that went). Errors are shown by the form. */
export function useCreateSource(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (body: SourceCreate) => (await createSource({ path: { project_id: projectId }, body })).data!,
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: sourceKeys.project(projectId) }),
  });
}

/** Changes a source; a new URL or password is checked again (and lists the tables again). Errors are shown by the form. */
export function useUpdateSource(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, body }: { id: string; body: SourceUpdate }) => (await updateSource({ path: { source_id: id }, body })).data!,
    meta: { silent: true },
    onSuccess: (source) => {
      void qc.invalidateQueries({ queryKey: sourceKeys.project(projectId) });
      void qc.invalidateQueries({ queryKey: sourceKeys.schema(source.id) });
    },
  });
}

export function useDeleteSource(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (id: string) => {
      await deleteSource({ path: { source_id: id } });
    },
    onSuccess: () => qc.invalidateQueries({ queryKey: sourceKeys.project(projectId) }),
  });
}

/** Connects and lists the tables now; the answer's sentence says how it went. */
export function useCheckSource(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (id: string) => (await checkSource({ path: { source_id: id } })).data!,
    onSettled: (_result, _error, id) => {
      void qc.invalidateQueries({ queryKey: sourceKeys.project(projectId) });
      void qc.invalidateQueries({ queryKey: sourceKeys.schema(id) });
    },
  });
}

/** Saves descriptions of tables and columns (the data dictionary); the answer is the whole schema again. Errors are shown where they were typed. */
export function useDescribeSchema(sourceId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (body: SchemaPatch) => (await describeSchema({ path: { source_id: sourceId }, body })).data!,
    meta: { silent: true },
    onSuccess: (schema) => qc.setQueryData(sourceKeys.schema(sourceId), schema),
  });
}
