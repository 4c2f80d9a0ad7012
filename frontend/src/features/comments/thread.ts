import type { CommentOut } from '@/client';

export type ThreadEntry = { comment: CommentOut; replies: CommentOut[] };

/**
 * Comments as the thread shows them: each top-level comment in order, with every reply under it
 * (a reply to a reply joins its root's replies, one indent deep, in order).
 */
export function threadOf(comments: CommentOut[]): ThreadEntry[] {
  const byId = new Map(comments.map((c) => [c.id, c]));
  const rootOf = (c: CommentOut): string => {
    const seen = new Set<string>();
    let at = c;
    while (at.reply_to && byId.has(at.reply_to) && !seen.has(at.id)) {
      seen.add(at.id);
      at = byId.get(at.reply_to)!;
    }
    return at.id;
  };
  const entries = new Map<string, ThreadEntry>();
  for (const c of comments) {
    const root = rootOf(c);
    if (root === c.id) entries.set(c.id, { comment: c, replies: entries.get(c.id)?.replies ?? [] });
    else {
      const entry = entries.get(root);
      if (entry) entry.replies.push(c);
    }
  }
  return [...entries.values()];
}
