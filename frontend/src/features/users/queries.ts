import { queryOptions } from '@tanstack/react-query';
import { listUsers } from '@/client';

export const userKeys = {
  all: ['users'] as const,
};

/** Every account, oldest first (administrators only). */
export const usersQuery = () =>
  queryOptions({
    queryKey: userKeys.all,
    queryFn: async () => (await listUsers({ query: { limit: 500 } })).data!,
  });
