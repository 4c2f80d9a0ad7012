import { afterEach, describe, expect, it, vi } from 'vitest';
import { authFetch } from '@/lib/api';
import { followSession, toLiveEvent } from './live-stream';
import { initials } from './presence';

vi.mock('@/lib/api', async (original) => ({ ...(await original<typeof import('@/lib/api')>()), authFetch: vi.fn() }));

const body = (text: string) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode(text));
      c.close();
    },
  });

afterEach(() => vi.mocked(authFetch).mockReset());

describe('the live stream of a session', () => {
  it('reads its events in order, heartbeats and unknown events left out', async () => {
    const ac = new AbortController();
    const seen: string[] = [];
    vi.mocked(authFetch).mockImplementation(async () => {
      return new Response(
        body(
          ': ping\n\nevent: presence\ndata: {"session_id":"s","users":[{"user_id":"a","email":"a@x.org"}]}\n\n' +
            'event: something.new\ndata: {}\n\n' +
            'event: run.created\ndata: {"session_id":"s","run_id":"r1","asked_by":{"user_id":"b","email":"b@x.org"},"query":"Q?"}\n\n' +
            'event: session.updated\ndata: {"session_id":"s","title":"T"}\n\n',
        ),
      );
    });
    await followSession(
      's',
      (e) => {
        seen.push(e.event === 'run.created' ? `run.created ${e.run_id}` : e.event);
        if (e.event === 'session.updated') ac.abort();
      },
      ac.signal,
    );
    expect(seen).toEqual(['presence', 'run.created r1', 'session.updated']);
    expect(vi.mocked(authFetch).mock.calls[0][0]).toBe('/api/v1/sessions/s/live');
  });

  it('drops a malformed message', () => {
    expect(toLiveEvent('presence', '{not json')).toBeNull();
  });

  it('shows people by their initials', () => {
    expect(initials('ana.lopez@example.com')).toBe('AL');
    expect(initials('bob@example.com')).toBe('BO');
  });
});
