import { queryOptions } from '@tanstack/react-query';
import { listInvites, listUsers } from '@/client';

export const userKeys = {
  all: ['users'] as const,
};

/** Every account, oldest first (administrators only). */
export const usersQuery = () =>
  queryOptions({
    queryKey: userKeys.all,
    queryFn: async () => (await listUsers({ query: { limit: 500 } })).data!,
  });

export const inviteKeys = {
  all: ['invites'] as const,
  list: (projectId?: string) => ['invites', projectId ?? 'all'] as const,
};

/** The invites the user manages (administrators: all; owners: their project's), newest first. */
export const invitesQuery = (projectId?: string) =>
  queryOptions({
    queryKey: inviteKeys.list(projectId),
    queryFn: async () => (await listInvites({ query: { limit: 100, project_id: projectId } })).data!,
    // An email being sent settles after the invite was made: look again until it did.
    refetchInterval: (q) => (q.state.data?.items.some((i) => i.email_status === 'sending') ? 2000 : false),
  });
