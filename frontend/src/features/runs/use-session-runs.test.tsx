import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, renderHook, waitFor } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { answerRun, listRuns as listRunsRequest, type RunOut } from '@/client';
import { ApiError, authFetch } from '@/lib/api';
import { storedRun } from '@/test/runs';
import { emptyRun, reduceRunEvents } from './run-reducer';
import { useRunStore } from './run-store';
import { mergeRuns, useSessionRuns, type StreamState } from './use-session-runs';

vi.mock('@/lib/api', async (original) => ({
  ...(await original<typeof import('@/lib/api')>()),
  authFetch: vi.fn(),
}));
vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  listRuns: vi.fn(),
  answerRun: vi.fn(),
}));

const P = 'project-1';
const S = 'session-1';

const stored = (id: string, over: Partial<RunOut> = {}): RunOut =>
  storedRun({ id, session_id: S, query: `Question ${id}?`, final_answer: 'Done.', tokens_in: 1, tokens_out: 1, ...over });

const streamed = (id: string, events = 1) =>
  reduceRunEvents(
    emptyRun(id, `Question ${id}?`),
    Array.from({ length: events }, (_, i) => ({ event: 'step.started' as const, run_id: id, seq: i + 1, step: i + 1 })),
  );

const none: StreamState = { views: {}, started: null, connection: {}, pinned: {} };

describe('mergeRuns', () => {
  it('shows each stored run from history until its stream has delivered an event', () => {
    const [finished, going] = [stored('a'), stored('b', { status: 'running' })];
    const attached = { ...none, views: { b: emptyRun('b') } };
    const runs = mergeRuns([finished, going], attached);
    expect(runs.map((r) => [r.view.runId, r.view.status, r.live])).toEqual([
      ['a', 'succeeded', false],
      ['b', 'running', true],
    ]);
    expect(runs[1].stored).toBe(going);

    const replaying = mergeRuns([finished, going], { ...none, views: { b: streamed('b', 2) }, connection: { b: 'reconnecting' } });
    expect(replaying[1].view.lastSeq).toBe(2);
    expect(replaying[1].reconnecting).toBe(true);
    expect(replaying[0].reconnecting).toBe(false);
  });

  it('shows a run from history once it ended, over a view this tab kept from before it left mid-run', () => {
    const runs = mergeRuns([stored('a')], { ...none, views: { a: streamed('a', 3) } });
    expect(runs[0].view.status).toBe('succeeded');
    expect(runs[0].view.answer).toBe('Done.');
    // While this tab still follows the run, its stream is what shows (the rest of it is on the way).
    for (const state of ['open', 'reconnecting'] as const) {
      const following = mergeRuns([stored('a')], { ...none, views: { a: streamed('a', 3) }, connection: { a: state } });
      expect(following[0].view.status).toBe('running');
      expect(following[0].view.lastSeq).toBe(3);
    }
  });

  it('adds the run just asked until the history holds it, with the files pinned to it', () => {
    const stream = { ...none, views: { c: streamed('c') }, started: 'c', pinned: { c: ['f1'], a: ['f0'] } };
    const before = mergeRuns([stored('a', { file_ids: [] })], stream);
    expect(before.map((r) => r.view.runId)).toEqual(['a', 'c']);
    expect(before[1]).toMatchObject({ stored: null, live: true, fileIds: ['f1'] });
    // What the server stored wins over what this tab pinned.
    expect(before[0].fileIds).toEqual([]);

    const after = mergeRuns([stored('a'), stored('c', { status: 'running' })], stream);
    expect(after.map((r) => r.view.runId)).toEqual(['a', 'c']);
    expect(after[1].stored?.id).toBe('c');
    expect(after[0].fileIds).toEqual(['f0']);
  });
});

/** SSE text for `events` of run `runId`, numbered from 1. */
const sseText = (runId: string, events: [string, Record<string, unknown>][]) =>
  events.map(([event, data], i) => `event: ${event}\ndata: ${JSON.stringify({ run_id: runId, seq: i + 1, ...data })}\n\n`).join('');

/** A stream that stays open (after `events`) until its request is aborted, which `aborted` records. */
function openStream(init: RequestInit | undefined, runId: string, events: [string, Record<string, unknown>][], aborted: string[]) {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(sseText(runId, events)));
      init?.signal?.addEventListener('abort', () => {
        aborted.push(runId);
        controller.error(new DOMException('aborted', 'AbortError'));
      });
    },
  });
  return new Response(body, { headers: { 'Content-Type': 'text/event-stream' } });
}

const listRuns = vi.mocked(listRunsRequest);
const history = (...items: RunOut[]) => listRuns.mockResolvedValue({ data: { items } } as never);

function mount(sessionId = S) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const wrapper = ({ children }: { children: ReactNode }) => <QueryClientProvider client={qc}>{children}</QueryClientProvider>;
  return renderHook(({ session }) => useSessionRuns(P, session), { wrapper, initialProps: { session: sessionId } });
}

beforeEach(() => {
  vi.mocked(authFetch).mockReset();
  listRuns.mockReset();
});
afterEach(() => useRunStore.setState({ runs: {}, pinned: {} }));

describe('useSessionRuns', () => {
  it('re-attaches a run the history says is still going, and closes its stream when the session goes', async () => {
    const aborted: string[] = [];
    history(stored('a'), stored('b', { status: 'running' }));
    vi.mocked(authFetch).mockImplementation(async (_url, init) =>
      openStream(init, 'b', [['step.started', { step: 1 }]], aborted),
    );
    const { result, unmount } = mount();
    await waitFor(() => expect(result.current.runs.map((r) => r.view.runId)).toEqual(['a', 'b']));
    await waitFor(() => expect(result.current.runs[1].view.steps).toHaveLength(1));
    expect(vi.mocked(authFetch).mock.calls.map(([url]) => url)).toEqual(['/api/v1/runs/b/events']);
    expect(result.current.active?.runId).toBe('b');
    expect(result.current.runs[1].live).toBe(true);

    unmount();
    expect(aborted).toEqual(['b']);
  });

  it('closes the streams of a session it leaves for another', async () => {
    const aborted: string[] = [];
    listRuns.mockImplementation(async ({ path }) =>
      ({ data: { items: path.session_id === S ? [stored('b', { status: 'running' })] : [] } }) as never,
    );
    vi.mocked(authFetch).mockImplementation(async (_url, init) => openStream(init, 'b', [], aborted));
    const { result, rerender } = mount();
    await waitFor(() => expect(authFetch).toHaveBeenCalledTimes(1));
    rerender({ session: 'session-2' });
    expect(aborted).toEqual(['b']);
    await waitFor(() => expect(result.current.loaded).toBe(true));
    expect(result.current.runs).toEqual([]);
  });

  it('shows a question while it starts, then its run, which stays when it finishes', async () => {
    history();
    let post: (r: Response) => void = () => undefined;
    vi.mocked(authFetch).mockImplementation(() => new Promise((resolve) => (post = resolve)));
    const { result } = mount();
    await waitFor(() => expect(result.current.isNew).toBe(true));

    act(() => void result.current.ask({ query: 'Total revenue?', model: null, fileIds: ['f1'] }));
    expect(result.current.sending).toBe('Total revenue?');
    history(stored('c', { file_ids: ['f1'] }));
    act(() =>
      post(
        new Response(
          sseText('c', [
            ['run.started', { query: 'Total revenue?' }],
            ['run.finished', { status: 'succeeded', error: null, tokens_in: 1, tokens_out: 1, cost_usd: null, duration_ms: 1 }],
          ]),
        ),
      ),
    );
    await waitFor(() => expect(result.current.sending).toBeNull());
    await waitFor(() => expect(result.current.runs.map((r) => [r.view.runId, r.view.status])).toEqual([['c', 'succeeded']]));
    // Finished, and held by the refetched history.
    await waitFor(() => expect(result.current.runs[0].stored?.id).toBe('c'));
    expect(result.current.active).toBeNull();
    expect(vi.mocked(authFetch).mock.calls[0][0]).toBe(`/api/v1/sessions/${S}/query`);
  });

  it('refetches the history once a question has its run, so the session shows it when it comes back', async () => {
    const aborted: string[] = [];
    history();
    vi.mocked(authFetch).mockImplementation(async (_url, init) => openStream(init, 'c', [['run.started', { query: 'Slow?' }]], aborted));
    const { result, unmount } = mount();
    await waitFor(() => expect(result.current.loaded).toBe(true));
    expect(listRuns).toHaveBeenCalledTimes(1);
    history(stored('c', { status: 'running' }));
    act(() => void result.current.ask({ query: 'Slow?', model: null, fileIds: [] }));
    await waitFor(() => expect(listRuns).toHaveBeenCalledTimes(2));
    await waitFor(() => expect(result.current.runs.map((r) => [r.view.runId, r.stored?.status])).toEqual([['c', 'running']]));
    // Already followed by the question's own stream: not attached a second time.
    expect(authFetch).toHaveBeenCalledTimes(1);
    unmount();
    expect(aborted).toEqual(['c']);
  });

  it('keeps a refusal above the composer, and lets "busy" go once the session is idle', async () => {
    const aborted: string[] = [];
    history(stored('b', { status: 'running' }));
    let finish: () => void = () => undefined;
    vi.mocked(authFetch).mockImplementation(async (url, init) => {
      if (String(url).endsWith('/query')) throw new ApiError(409, 'This session is still answering another question.', 'session_busy');
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(sseText('b', [['step.started', { step: 1 }]])));
          finish = () => {
            controller.enqueue(
              new TextEncoder().encode(
                'event: run.finished\ndata: ' +
                  JSON.stringify({ run_id: 'b', seq: 2, status: 'succeeded', error: null, tokens_in: 1, tokens_out: 1, cost_usd: null, duration_ms: 1 }) +
                  '\n\n',
              ),
            );
            controller.close();
          };
          init?.signal?.addEventListener('abort', () => aborted.push('b'));
        },
      });
      return new Response(body);
    });
    const { result } = mount();
    await waitFor(() => expect(result.current.active?.runId).toBe('b'));
    await waitFor(() => expect(result.current.runs[0].view.lastSeq).toBe(1));

    let taken: Promise<boolean> = Promise.resolve(true);
    act(() => {
      taken = result.current.ask({ query: 'Again?', model: null, fileIds: [] });
    });
    await waitFor(() => expect(result.current.refusal?.code).toBe('session_busy'));
    // Refused: the composer gives the question back.
    expect(await taken).toBe(false);
    expect(result.current.sending).toBeNull();
    expect(result.current.refusal?.detail).toBe('This session is still answering another question.');

    history(stored('b'));
    act(() => finish());
    await waitFor(() => expect(result.current.active).toBeNull());
    await waitFor(() => expect(result.current.refusal).toBeNull());
  });

  it('follows a run once the answer to its question is taken', async () => {
    const aborted: string[] = [];
    history(stored('w', { status: 'succeeded' }));
    vi.mocked(answerRun).mockResolvedValue({ data: stored('w', { status: 'running' }) } as never);
    vi.mocked(authFetch).mockImplementation(async (_url, init) => openStream(init, 'w', [], aborted));
    const { result, unmount } = mount();
    await waitFor(() => expect(result.current.loaded).toBe(true));
    expect(authFetch).not.toHaveBeenCalled();

    await act(() => result.current.replies.answer('w', 'gross'));
    await waitFor(() => expect(vi.mocked(authFetch).mock.calls.map(([url]) => url)).toEqual(['/api/v1/runs/w/events']));
    unmount();
    expect(aborted).toEqual(['w']);
  });
});

describe('a run another member asked', () => {
  it('is followed when the live stream tells of it: the history is looked at again, without a timer', async () => {
    history(stored('a'));
    const { result } = mount(S);
    await waitFor(() => expect(result.current.runs.map((r) => r.view.runId)).toEqual(['a']));
    expect(listRuns).toHaveBeenCalledTimes(1);
    history(stored('a'), stored('b', { asked_by: { user_id: 'bob', email: 'bob@example.com' } }));
    act(() => result.current.follow('b'));
    await waitFor(() => expect(result.current.runs.map((r) => r.view.runId)).toEqual(['a', 'b']));
    expect(result.current.runs[1].stored?.asked_by?.email).toBe('bob@example.com');
    // One it already holds needs nothing.
    act(() => result.current.follow('a'));
    expect(listRuns).toHaveBeenCalledTimes(2);
  });
});
