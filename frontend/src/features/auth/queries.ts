import { queryOptions } from '@tanstack/react-query';
import { me } from '@/client';

export const authKeys = {
  me: ['auth', 'me'] as const,
};

/** The signed-in user as the server knows them now (an administrator may have changed their role). */
export const meQuery = () =>
  queryOptions({
    queryKey: authKeys.me,
    queryFn: async () => (await me()).data!,
  });
