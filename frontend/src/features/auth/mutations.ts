import { useMutation, useQueryClient } from '@tanstack/react-query';
import { changePassword, type PasswordChange } from '@/client';
import { useAuthStore } from './auth-store';
import { authKeys } from './queries';

/**
 * Changes the user's own password. The server ends every login of theirs, this one included,
 * and answers with a new one: it is stored before anything else is sent, so the user stays in.
 * Errors are shown by the form.
 */
export function useChangePassword() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (body: PasswordChange) => {
      const login = (await changePassword({ body })).data!;
      useAuthStore.getState().signIn({ token: login.access_token, user: login.user, expiresAt: login.expires_at });
      return login;
    },
    meta: { silent: true },
    onSuccess: (login) => {
      qc.setQueryData(authKeys.me, login.user);
      // A request that went out with the old login in the meantime was refused: ask again with the new one.
      void qc.refetchQueries({ predicate: (q) => q.state.status === 'error' });
    },
  });
}
