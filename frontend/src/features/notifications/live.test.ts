import { afterEach, describe, expect, it, vi } from 'vitest';
import type { NotificationOut, NotificationPage } from '@/client';
import { authFetch } from '@/lib/api';
import { applyInboxEvent, followNotifications } from './live';

vi.mock('@/lib/api', async (original) => ({ ...(await original<typeof import('@/lib/api')>()), authFetch: vi.fn() }));

const body = (text: string) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode(text));
      c.close();
    },
  });

const note = (id: string, read_at: string | null = null): NotificationOut => ({
  id,
  kind: 'comment',
  project_id: 'p',
  session_id: 's',
  run_id: 'r',
  comment_id: `c${id}`,
  actor_email: 'bob@example.com',
  text: 'Net?',
  created_at: '2026-01-01T00:00:00Z',
  read_at,
});

afterEach(() => vi.mocked(authFetch).mockReset());

describe('the notification stream', () => {
  it('reads its events and reopens after the last id it saw', async () => {
    const ac = new AbortController();
    const seen: string[] = [];
    let calls = 0;
    vi.mocked(authFetch).mockImplementation(async () => {
      calls += 1;
      if (calls === 1)
        return new Response(body(`: ready\n\nid: 7-0\nevent: notification.created\ndata: ${JSON.stringify({ notification: note('a') })}\n\n`));
      return new Response(body('id: 8-0\nevent: notification.read\ndata: {"ids":null,"marked":1,"unread":0}\n\n'));
    });
    await followNotifications((e) => {
      seen.push(e.event);
      if (e.event === 'notification.read') ac.abort();
    }, ac.signal);
    expect(seen).toEqual(['notification.created', 'notification.read']);
    const [url, init] = vi.mocked(authFetch).mock.calls[1];
    expect(url).toBe('/api/v1/notifications/live');
    expect(new Headers(init?.headers).get('Last-Event-ID')).toBe('7-0');
  });

  it('puts a new one first and counts it, once', () => {
    const page: NotificationPage = { items: [note('a', '2026-01-01T00:00:00Z')], total: 1, unread: 0 };
    const added = applyInboxEvent(page, { event: 'notification.created', notification: note('b') })!;
    expect(added.items.map((n) => n.id)).toEqual(['b', 'a']);
    expect([added.total, added.unread]).toEqual([2, 1]);
    expect(applyInboxEvent(added, { event: 'notification.created', notification: note('b') })).toBe(added);
  });

  it('clears what another tab read', () => {
    const page: NotificationPage = { items: [note('a'), note('b')], total: 2, unread: 2 };
    const one = applyInboxEvent(page, { event: 'notification.read', ids: ['a'], marked: 1, unread: 1 })!;
    expect(one.items.map((n) => Boolean(n.read_at))).toEqual([true, false]);
    const all = applyInboxEvent(one, { event: 'notification.read', ids: null, marked: 1, unread: 0 })!;
    expect(all.unread).toBe(0);
    expect(all.items.every((n) => n.read_at)).toBe(true);
  });
});
