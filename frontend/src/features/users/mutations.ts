import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createInvite, createUser, revokeInvite, updateUser, type InviteCreate, type UserCreate, type UserUpdate } from '@/client';
import { inviteKeys, userKeys } from './queries';

// Errors are the server's sentences (email_taken, cannot_change_self): the users screen shows them where they belong.

/** A new account with a generated password (in the answer, once), which they change at their first sign-in. */
export function useCreateUser() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (body: UserCreate) => (await createUser({ body })).data!,
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: userKeys.all }),
  });
}

/** An administrator's change to one account: role, disabled or not, a generated password. */
export function useUpdateUser() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, ...body }: UserUpdate & { id: string }) =>
      (await updateUser({ path: { user_id: id }, body })).data!,
    meta: { silent: true },
    onSettled: () => qc.invalidateQueries({ queryKey: userKeys.all }),
  });
}

/** An invite by email: its link is in the answer, once (and emailed when the server has SMTP). */
export function useCreateInvite() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (body: InviteCreate) => (await createInvite({ body })).data!,
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: inviteKeys.all }),
  });
}

export function useRevokeInvite() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (id: string) => (await revokeInvite({ path: { invite_id: id } })).data,
    meta: { silent: true },
    onSettled: () => qc.invalidateQueries({ queryKey: inviteKeys.all }),
  });
}
