import { queryOptions } from '@tanstack/react-query';
import { sandboxStatusApiV1SandboxGet } from '@/client';

export const systemKeys = {
  sandbox: ['system', 'sandbox'] as const,
};

/** Whether analysis code can run, and how it is isolated: polled, and checked again on focus. */
export const sandboxStatusQuery = () =>
  queryOptions({
    queryKey: systemKeys.sandbox,
    queryFn: async () => (await sandboxStatusApiV1SandboxGet()).data!,
    refetchInterval: 60_000,
    refetchOnWindowFocus: true,
    // A failed check is not worth a toast every minute; the next poll tries again.
    meta: { silent: true },
  });
