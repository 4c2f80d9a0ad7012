import { QueryObserver } from '@tanstack/react-query';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, authFetch } from '@/lib/api';
import { queryClient } from '@/lib/query-client';
import { runKeys } from './queries';
import { useRunStore } from './run-store';
import { BUSY_RETRIES, startQuery } from './run-stream';

vi.mock('@/lib/api', async (original) => ({
  ...(await original<typeof import('@/lib/api')>()),
  authFetch: vi.fn(),
}));

const S = 'session-1';
const R = 'run-1';

function sse(events: [string, Record<string, unknown>][]): Response {
  const text = events.map(([event, data], i) => `id: ${i + 1}\nevent: ${event}\ndata: ${JSON.stringify({ run_id: R, seq: i + 1, ...data })}\n\n`).join('');
  return new Response(text, { headers: { 'Content-Type': 'text/event-stream' } });
}

afterEach(() => {
  queryClient.clear();
  useRunStore.setState({ runs: {}, live: {}, sending: {} });
});

describe('a run that finishes', () => {
  it('stays the live run until the refetched history holds it, so it never leaves the page', async () => {
    let historyBack: (v: { items: { id: string }[] }) => void = () => undefined;
    let fetches = 0;
    const observer = new QueryObserver(queryClient, {
      queryKey: runKeys.session(S),
      queryFn: () => (fetches++ === 0 ? Promise.resolve({ items: [] }) : new Promise((resolve) => (historyBack = resolve))),
    });
    const stop = observer.subscribe(() => undefined);
    await vi.waitFor(() => expect(observer.getCurrentResult().data).toEqual({ items: [] }));

    vi.mocked(authFetch).mockResolvedValue(
      sse([
        ['run.started', { query: 'Total revenue?', model: 'm' }],
        ['run.finished', { status: 'succeeded', final_answer: '42', duration_ms: 5, tokens_in: 1, tokens_out: 1 }],
      ]),
    );
    await startQuery(S, { query: 'Total revenue?' });
    expect(useRunStore.getState().runs[R].status).toBe('succeeded');
    // History has not come back yet: the session still shows the run from the stream.
    await vi.waitFor(() => expect(fetches).toBe(2));
    expect(useRunStore.getState().live[S]).toBe(R);

    historyBack({ items: [{ id: R }] });
    await vi.waitFor(() => expect(useRunStore.getState().live[S]).toBeUndefined());
    stop();
  });
});

describe('a busy server', () => {
  const busy = () =>
    new ApiError(503, 'The server is busy (all database connections are in use); try again shortly.', 'server_busy', 0);

  it('is asked again after its Retry-After, and the question goes through', async () => {
    vi.mocked(authFetch)
      .mockReset()
      .mockRejectedValueOnce(busy())
      .mockRejectedValueOnce(busy())
      .mockResolvedValueOnce(
        sse([
          ['run.started', { query: 'Total revenue?', model: 'm' }],
          ['run.finished', { status: 'succeeded', final_answer: '42', duration_ms: 5, tokens_in: 1, tokens_out: 1 }],
        ]),
      );
    await startQuery(S, { query: 'Total revenue?' });
    expect(authFetch).toHaveBeenCalledTimes(3);
    expect(useRunStore.getState().runs[R].status).toBe('succeeded');
  });

  it('says so once it stays busy, and other errors are not asked again', async () => {
    vi.mocked(authFetch).mockReset().mockRejectedValue(busy());
    await expect(startQuery(S, { query: 'Total revenue?' })).rejects.toThrow('The server is busy');
    expect(authFetch).toHaveBeenCalledTimes(BUSY_RETRIES + 1);
    expect(useRunStore.getState().sending[S]).toBeUndefined();

    vi.mocked(authFetch).mockReset().mockRejectedValue(new ApiError(503, 'No sandbox here.', 'sandbox_unavailable', 5));
    await expect(startQuery(S, { query: 'Total revenue?' })).rejects.toThrow('No sandbox here.');
    expect(authFetch).toHaveBeenCalledTimes(1);
  });
});
