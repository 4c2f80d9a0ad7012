import { queryOptions } from '@tanstack/react-query';
import { listComments } from '@/client';

export const commentKeys = {
  all: ['comments'] as const,
  run: (runId: string) => ['comments', runId] as const,
};

/** A run's comments, oldest first (the first 500; replies among them, `reply_to` says where). */
export const commentsQuery = (runId: string) =>
  queryOptions({
    queryKey: commentKeys.run(runId),
    queryFn: async () => (await listComments({ path: { run_id: runId }, query: { limit: 500 } })).data!,
  });
