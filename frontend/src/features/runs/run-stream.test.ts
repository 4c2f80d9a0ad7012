import { QueryObserver } from '@tanstack/react-query';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runStarted } from '@/test/runs';
import { ApiError, authFetch } from '@/lib/api';
import { queryClient } from '@/lib/query-client';
import { runKeys } from './queries';
import { useRunStore } from './run-store';
import { BUSY_RETRIES, SessionStreams } from './run-stream';

vi.mock('@/lib/api', async (original) => ({
  ...(await original<typeof import('@/lib/api')>()),
  authFetch: vi.fn(),
}));

const S = 'session-1';
const R = 'run-1';

function sse(events: [string, Record<string, unknown>][], runId = R): Response {
  const text = events
    .map(([event, data], i) => `id: ${i + 1}\nevent: ${event}\ndata: ${JSON.stringify({ run_id: runId, seq: i + 1, ...data })}\n\n`)
    .join('');
  return new Response(text, { headers: { 'Content-Type': 'text/event-stream' } });
}

const answered = (runId = R) =>
  sse(
    [
      ['run.started', { query: 'Total revenue?', model: 'm' }],
      ['run.finished', { status: 'succeeded', final_answer: '42', duration_ms: 5, tokens_in: 1, tokens_out: 1 }],
    ],
    runId,
  );

/** A response whose stream stays open until the request is aborted. */
function openStream(init: RequestInit | undefined, events: [string, Record<string, unknown>][] = []) {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      events.forEach(([event, data], i) =>
        controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify({ run_id: R, seq: i + 1, ...data })}\n\n`)),
      );
      init?.signal?.addEventListener('abort', () => controller.error(new DOMException('aborted', 'AbortError')));
    },
  });
  return new Response(body, { headers: { 'Content-Type': 'text/event-stream' } });
}

const listener = () => ({ connection: vi.fn(), finished: vi.fn() });

afterEach(() => {
  queryClient.clear();
  vi.mocked(authFetch).mockReset();
  useRunStore.setState({ runs: {}, pinned: {} });
});

describe('a run that finishes', () => {
  it('is reported finished only once the refetched history holds it, so it never leaves the page', async () => {
    let historyBack: (v: { items: { id: string }[] }) => void = () => undefined;
    let fetches = 0;
    const observer = new QueryObserver(queryClient, {
      queryKey: runKeys.session(S),
      queryFn: () => (fetches++ === 0 ? Promise.resolve({ items: [] }) : new Promise((resolve) => (historyBack = resolve))),
    });
    const stop = observer.subscribe(() => undefined);
    await vi.waitFor(() => expect(observer.getCurrentResult().data).toEqual({ items: [] }));

    vi.mocked(authFetch).mockResolvedValue(answered());
    const on = listener();
    const started = vi.fn();
    await new SessionStreams(S, queryClient, on).ask({ query: 'Total revenue?', file_ids: ['f1'] }, started);
    expect(started).toHaveBeenCalledWith(R);
    expect(useRunStore.getState().runs[R].status).toBe('succeeded');
    expect(useRunStore.getState().pinned[R]).toEqual(['f1']);
    // History has not come back yet: the run still shows from its stream.
    await vi.waitFor(() => expect(fetches).toBe(2));
    expect(on.finished).not.toHaveBeenCalled();

    historyBack({ items: [{ id: R }] });
    await vi.waitFor(() => expect(on.finished).toHaveBeenCalledWith(R));
    stop();
  });
});

describe('attaching and detaching', () => {
  it('follows a run once, from the last event seen, and stops when detached', async () => {
    useRunStore.getState().ensureRun(R, 'Total revenue?');
    useRunStore.getState().dispatch(runStarted(R, 1));
    vi.mocked(authFetch).mockImplementation(async (_url, init) => openStream(init, []));
    const on = listener();
    const streams = new SessionStreams(S, queryClient, on);
    const followed = streams.attach(R);
    void streams.attach(R);
    await vi.waitFor(() => expect(on.connection).toHaveBeenCalledWith(R, 'open'));
    expect(authFetch).toHaveBeenCalledTimes(1);
    const [url, init] = vi.mocked(authFetch).mock.calls[0];
    expect(url).toBe(`/api/v1/runs/${R}/events`);
    expect(new Headers(init?.headers).get('Last-Event-ID')).toBe('1');
    expect(streams.isAttached(R)).toBe(true);

    streams.detach(R);
    await followed;
    expect(streams.isAttached(R)).toBe(false);
    expect(on.connection).toHaveBeenLastCalledWith(R, null);
    expect(on.finished).not.toHaveBeenCalled();
  });

  it('closes every stream, a question being asked included, and follows nothing after', async () => {
    vi.mocked(authFetch).mockImplementation(async (_url, init) => openStream(init, [['run.started', { query: 'Q' }]]));
    const on = listener();
    const streams = new SessionStreams(S, queryClient, on);
    const started = vi.fn();
    const asked = streams.ask({ query: 'Q' }, started);
    await vi.waitFor(() => expect(started).toHaveBeenCalledWith(R));
    expect(streams.isAttached(R)).toBe(true);

    streams.close();
    await expect(asked).resolves.toBeUndefined();
    expect(streams.isAttached(R)).toBe(false);
    await streams.attach('run-2');
    expect(authFetch).toHaveBeenCalledTimes(1);
    expect(on.finished).not.toHaveBeenCalled();
  });

  it('re-attaches after the network drops, saying it reconnects', async () => {
    useRunStore.getState().ensureRun(R);
    vi.mocked(authFetch)
      .mockRejectedValueOnce(new ApiError(0, 'The server could not be reached.'))
      .mockResolvedValueOnce(answered());
    const on = listener();
    await new SessionStreams(S, queryClient, on).attach(R);
    expect(on.connection).toHaveBeenCalledWith(R, 'reconnecting');
    expect(authFetch).toHaveBeenCalledTimes(2);
    expect(useRunStore.getState().runs[R].status).toBe('succeeded');
    await vi.waitFor(() => expect(on.finished).toHaveBeenCalledWith(R));
  });
});

describe('a busy server', () => {
  const busy = () =>
    new ApiError(503, 'The server is busy (all database connections are in use); try again shortly.', 'server_busy', 0);

  it('is asked again after its Retry-After, and the question goes through', async () => {
    vi.mocked(authFetch).mockRejectedValueOnce(busy()).mockRejectedValueOnce(busy()).mockResolvedValueOnce(answered());
    await new SessionStreams(S, queryClient, listener()).ask({ query: 'Total revenue?' }, vi.fn());
    expect(authFetch).toHaveBeenCalledTimes(3);
    expect(useRunStore.getState().runs[R].status).toBe('succeeded');
  });

  it('says so once it stays busy, and other errors are not asked again', async () => {
    const streams = new SessionStreams(S, queryClient, listener());
    vi.mocked(authFetch).mockRejectedValue(busy());
    await expect(streams.ask({ query: 'Total revenue?' }, vi.fn())).rejects.toThrow('The server is busy');
    expect(authFetch).toHaveBeenCalledTimes(BUSY_RETRIES + 1);

    vi.mocked(authFetch).mockReset().mockRejectedValue(new ApiError(503, 'No sandbox here.', 'sandbox_unavailable', 5));
    await expect(streams.ask({ query: 'Total revenue?' }, vi.fn())).rejects.toThrow('No sandbox here.');
    expect(authFetch).toHaveBeenCalledTimes(1);
  });
});
