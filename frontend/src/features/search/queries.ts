import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { search } from '@/client';

export const PAGE_SIZE = 20;

/** Hits of `q` in every session the user can see (a page of them). */
export const searchQuery = (q: string, offset = 0) =>
  queryOptions({
    queryKey: ['search', q, offset] as const,
    queryFn: async () => (await search({ query: { q, limit: PAGE_SIZE, offset } })).data!,
    enabled: q.trim().length > 0,
    placeholderData: keepPreviousData,
    staleTime: 10_000,
  });
