import { useMutation, useQueryClient } from '@tanstack/react-query';
import {
  createProject,
  deleteProject,
  updateProject,
  type ProjectUpdate,
} from '@/client';
import { projectKeys } from './queries';

export function useCreateProject() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (name: string) => (await createProject({ body: { name } })).data!,
    onSuccess: () => qc.invalidateQueries({ queryKey: projectKeys.all }),
  });
}

export function useRenameProject() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, name }: { id: string; name: string }) =>
      (await updateProject({ path: { project_id: id }, body: { name } })).data!,
    onSuccess: () => qc.invalidateQueries({ queryKey: projectKeys.all }),
  });
}

export function useDeleteProject() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (id: string) => {
      await deleteProject({ path: { project_id: id } });
    },
    onSuccess: () => qc.invalidateQueries({ queryKey: projectKeys.all }),
  });
}

/** Sets or removes (null) a project's budgets; a field left out stays as it is. Errors are shown by the form. */
export function useUpdateProjectBudget(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (budget: Pick<ProjectUpdate, 'budget_usd' | 'budget_tokens'>) =>
      (await updateProject({ path: { project_id: projectId }, body: budget })).data!,
    meta: { silent: true },
    onSuccess: (project) => {
      qc.setQueryData(projectKeys.detail(projectId), project);
      void qc.invalidateQueries({ queryKey: projectKeys.all, exact: true });
    },
  });
}
