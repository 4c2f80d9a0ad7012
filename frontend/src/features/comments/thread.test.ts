import { describe, expect, it } from 'vitest';
import type { CommentOut } from '@/client';
import { threadOf } from './thread';

const c = (id: string, reply_to: string | null = null): CommentOut => ({
  id,
  run_id: 'r',
  author: { user_id: 'u', email: 'u@example.com' },
  body: id,
  reply_to,
  created_at: '2026-11-29T08:00:00Z',
});

describe('a comment thread', () => {
  it('puts replies under their comment, one indent deep, in order', () => {
    const thread = threadOf([c('a'), c('b'), c('a1', 'a'), c('a1x', 'a1'), c('b1', 'b')]);
    expect(thread.map((e) => [e.comment.id, e.replies.map((r) => r.id)])).toEqual([
      ['a', ['a1', 'a1x']],
      ['b', ['b1']],
    ]);
  });

  it('shows a reply whose comment is missing on its own', () => {
    expect(threadOf([c('x', 'gone')]).map((e) => e.comment.id)).toEqual(['x']);
  });
});
