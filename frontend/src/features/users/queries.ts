import { queryOptions } from '@tanstack/react-query';
import { listUsersApiV1UsersGet } from '@/client';

export const userKeys = {
  all: ['users'] as const,
};

/** Every account, oldest first (administrators only). */
export const usersQuery = () =>
  queryOptions({
    queryKey: userKeys.all,
    queryFn: async () => (await listUsersApiV1UsersGet({ query: { limit: 500 } })).data!,
  });
