import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';
import { toast } from 'sonner';
import { ApiError } from './api';

function report(error: unknown) {
  if (error instanceof ApiError && error.status === 401) return; // handled: back to login
  // The user's role fell short (an owner changed it since the page loaded): the server's sentence
  // says so, and the projects are read again so every control shows what the role allows now.
  if (error instanceof ApiError && error.code === 'forbidden_role') void queryClient.invalidateQueries({ queryKey: ['projects'] });
  toast.error(error instanceof Error ? error.message : 'Something went wrong.');
}

export const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError: (error, query) => (query.meta?.silent ? undefined : report(error)) }),
  mutationCache: new MutationCache({ onError: (error, _v, _c, mutation) => (mutation.meta?.silent ? undefined : report(error)) }),
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      retry: (count, error) => !(error instanceof ApiError && error.status >= 400 && error.status < 500) && count < 2,
      refetchOnWindowFocus: false,
    },
  },
});
