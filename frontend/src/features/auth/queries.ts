import { queryOptions } from '@tanstack/react-query';
import { authConfig, me } from '@/client';

export const authKeys = {
  me: ['auth', 'me'] as const,
  config: ['auth', 'config'] as const,
};

/** Queries that need no login (how to sign in): kept when a sign-out drops the user's data. */
export const isPublicQuery = (key: readonly unknown[]) => key[0] === authKeys.config[0] && key[1] === authKeys.config[1];

/** The signed-in user as the server knows them now (an administrator may have changed their role). */
export const meQuery = () =>
  queryOptions({
    queryKey: authKeys.me,
    queryFn: async () => (await me()).data!,
  });

/** How people sign in here (no login needed): the password form, a single sign-on button, or both. */
export const authConfigQuery = () =>
  queryOptions({
    queryKey: authKeys.config,
    queryFn: async () => (await authConfig()).data!,
    staleTime: 5 * 60_000,
  });
