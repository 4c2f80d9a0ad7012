import { queryOptions } from '@tanstack/react-query';
import { listModels, sandboxStatus } from '@/client';

export const systemKeys = {
  sandbox: ['system', 'sandbox'] as const,
  models: ['models'] as const,
};

/** Whether analysis code can run, and how it is isolated: polled, and checked again on focus. */
export const sandboxStatusQuery = () =>
  queryOptions({
    queryKey: systemKeys.sandbox,
    queryFn: async () => (await sandboxStatus()).data!,
    refetchInterval: 60_000,
    refetchOnWindowFocus: true,
    // A failed check is not worth a toast every minute; the next poll tries again.
    meta: { silent: true },
  });

/** The models a question may use; none at all when the server has no LLM_MODEL. */
export const modelsQuery = () =>
  queryOptions({
    queryKey: systemKeys.models,
    queryFn: async () => (await listModels()).data!,
    staleTime: 60_000,
  });
