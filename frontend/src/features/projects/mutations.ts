import { useMutation, useQueryClient } from '@tanstack/react-query';
import {
  createProjectApiV1ProjectsPost,
  deleteProjectApiV1ProjectsProjectIdDelete,
  updateProjectApiV1ProjectsProjectIdPatch,
  type ProjectUpdate,
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

/** Sets or removes (null) a project's budgets; a field left out stays as it is. Errors are shown by the form. */
export function useUpdateProjectBudget(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (budget: Pick<ProjectUpdate, 'budget_usd' | 'budget_tokens'>) =>
      (await updateProjectApiV1ProjectsProjectIdPatch({ path: { project_id: projectId }, body: budget })).data!,
    meta: { silent: true },
    onSuccess: (project) => {
      qc.setQueryData(projectKeys.detail(projectId), project);
      void qc.invalidateQueries({ queryKey: projectKeys.all, exact: true });
    },
  });
}
