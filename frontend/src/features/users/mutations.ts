import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createUser, updateUser, type UserCreate, type UserUpdate } from '@/client';
import { userKeys } from './queries';

// Errors are the server's sentences (email_taken, cannot_change_self): the users screen shows them where they belong.

export function useCreateUser() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (body: UserCreate) => (await createUser({ body })).data!,
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: userKeys.all }),
  });
}

/** An administrator's change to one account: role, disabled or not, a new password. */
export function useUpdateUser() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, ...body }: UserUpdate & { id: string }) =>
      (await updateUser({ path: { user_id: id }, body })).data!,
    meta: { silent: true },
    onSettled: () => qc.invalidateQueries({ queryKey: userKeys.all }),
  });
}
