import { useMutation, useQueryClient } from '@tanstack/react-query';
import {
  createProjectApiV1ProjectsPost,
  deleteProjectApiV1ProjectsProjectIdDelete,
  updateProjectApiV1ProjectsProjectIdPatch,
} from '@/client';
import { projectKeys } from './queries';

export function useCreateProject() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (name: string) => (await createProjectApiV1ProjectsPost({ body: { name } })).data!,
    onSuccess: () => qc.invalidateQueries({ queryKey: projectKeys.all }),
  });
}

export function useRenameProject() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, name }: { id: string; name: string }) =>
      (await updateProjectApiV1ProjectsProjectIdPatch({ path: { project_id: id }, body: { name } })).data!,
    onSuccess: () => qc.invalidateQueries({ queryKey: projectKeys.all }),
  });
}

export function useDeleteProject() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (id: string) => {
      await deleteProjectApiV1ProjectsProjectIdDelete({ path: { project_id: id } });
    },
    onSuccess: () => qc.invalidateQueries({ queryKey: projectKeys.all }),
  });
}
