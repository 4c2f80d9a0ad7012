import { useMutation, useQueryClient } from '@tanstack/react-query';
import { addMember, removeMember, updateMember, type MemberAdd, type MemberUpdate } from '@/client';
import { projectKeys } from '@/features/projects/queries';
import { memberKeys } from './queries';

// Errors are the server's sentences (user_not_found, already_member, last_owner): the dialog shows them where they belong.

/** Owners: adds a user, by the email they sign in with, with a role. */
export function useAddMember(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (body: MemberAdd) => (await addMember({ path: { project_id: projectId }, body })).data!,
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: memberKeys.project(projectId) }),
  });
}

/** Owners: changes a member's role (the last owner stays one). */
export function useChangeRole(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ userId, ...body }: MemberUpdate & { userId: string }) =>
      (await updateMember({ path: { project_id: projectId, user_id: userId }, body })).data!,
    meta: { silent: true },
    // One's own role may have changed: the project and the sidebar say which.
    onSettled: () => {
      void qc.invalidateQueries({ queryKey: memberKeys.project(projectId) });
      void qc.invalidateQueries({ queryKey: projectKeys.all });
    },
  });
}

/** Owners remove a member; any member removes themself (leaves). The last owner can do neither. */
export function useRemoveMember(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (userId: string) => {
      await removeMember({ path: { project_id: projectId, user_id: userId } });
    },
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: memberKeys.project(projectId) }),
  });
}
