import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Loader2, MessageSquare, Reply, Trash2 } from 'lucide-react';
import { useState } from 'react';
import { toast } from 'sonner';
import { addComment, deleteComment, type CommentOut } from '@/client';
import { Button } from '@/components/ui/button';
import { useAuthStore } from '@/features/auth/auth-store';
import { initials } from '@/features/live/presence';
import { useProjectRole } from '@/features/projects/role';
import { cn } from '@/lib/utils';
import { commentKeys, commentsQuery } from './queries';
import { threadOf } from './thread';

const MAX_CHARS = 4000;

/** The comments on one answer, replies indented; any member, a viewer too, may write, an author or an owner delete. */
export function CommentThread({ runId }: { runId: string }) {
  const comments = useQuery(commentsQuery(runId));
  const [open, setOpen] = useState(false);
  const [replyTo, setReplyTo] = useState<string | null>(null);
  const items = comments.data?.items ?? [];
  const thread = threadOf(items);
  const showing = open || items.length > 0;
  return (
    <div
      className={cn('mt-3 space-y-3', showing && 'border-l-2 border-muted pl-3 sm:pl-4')}
      data-testid="comment-thread"
      data-run-id={runId}
    >
      {thread.map(({ comment, replies }) => (
        <div key={comment.id} className="space-y-2">
          <CommentItem comment={comment} runId={runId} onReply={() => setReplyTo(comment.id)} />
          {(replies.length > 0 || replyTo === comment.id) && (
            <div className="ml-6 space-y-2 sm:ml-8" data-testid="comment-replies">
              {replies.map((r) => (
                <CommentItem key={r.id} comment={r} runId={runId} onReply={() => setReplyTo(comment.id)} />
              ))}
              {replyTo === comment.id && <CommentForm runId={runId} replyTo={comment.id} onDone={() => setReplyTo(null)} autoFocus />}
            </div>
          )}
        </div>
      ))}
      {showing ? (
        <CommentForm runId={runId} replyTo={null} />
      ) : (
        <Button variant="ghost" size="sm" className="-ml-2 text-muted-foreground" onClick={() => setOpen(true)} data-testid="comment-open">
          <MessageSquare /> Comment
        </Button>
      )}
    </div>
  );
}

function CommentItem({ comment, runId, onReply }: { comment: CommentOut; runId: string; onReply: () => void }) {
  const qc = useQueryClient();
  const me = useAuthStore((s) => s.auth?.user.id);
  const role = useProjectRole();
  const mine = comment.author?.user_id === me;
  const remove = useMutation({
    mutationFn: async () => (await deleteComment({ path: { comment_id: comment.id } })).data,
    onSuccess: () => qc.invalidateQueries({ queryKey: commentKeys.run(runId) }),
    onError: (e) => toast.error(e instanceof Error ? e.message : 'The comment could not be deleted.'),
  });
  const email = comment.author?.email ?? 'A former member';
  return (
    <article id={`comment-${comment.id}`} className="group flex gap-2.5 scroll-mt-24 text-sm" data-testid="comment">
      <span
        className="mt-0.5 flex size-6 shrink-0 items-center justify-center rounded-full bg-muted text-[10px] font-semibold text-muted-foreground"
        aria-hidden
      >
        {initials(email)}
      </span>
      <div className="min-w-0 flex-1">
        <p className="flex flex-wrap items-baseline gap-x-2 text-xs text-muted-foreground">
          <span className="font-medium text-foreground">{mine ? 'You' : email}</span>
          <time dateTime={comment.created_at} title={new Date(comment.created_at).toLocaleString()}>
            {new Date(comment.created_at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}
          </time>
        </p>
        {/* Plain text, shown as text: never markup. */}
        <p className="mt-0.5 break-words whitespace-pre-wrap" data-testid="comment-body">
          {comment.body}
        </p>
        <div className="mt-0.5 flex gap-1 opacity-70 group-hover:opacity-100">
          <Button variant="ghost" size="sm" className="-ml-2 h-6 px-2 text-xs" onClick={onReply} aria-label={`Reply to ${email}`}>
            <Reply className="size-3.5" /> Reply
          </Button>
          {(mine || role === 'owner') && (
            <Button
              variant="ghost"
              size="sm"
              className="h-6 px-2 text-xs text-muted-foreground hover:text-destructive"
              onClick={() => remove.mutate()}
              disabled={remove.isPending}
              aria-label="Delete comment"
            >
              <Trash2 className="size-3.5" /> Delete
            </Button>
          )}
        </div>
      </div>
    </article>
  );
}

function CommentForm({ runId, replyTo, onDone, autoFocus }: { runId: string; replyTo: string | null; onDone?: () => void; autoFocus?: boolean }) {
  const qc = useQueryClient();
  const [body, setBody] = useState('');
  const send = useMutation({
    mutationFn: async (text: string) => (await addComment({ path: { run_id: runId }, body: { body: text, reply_to: replyTo } })).data!,
    onSuccess: () => {
      setBody('');
      onDone?.();
      return qc.invalidateQueries({ queryKey: commentKeys.run(runId) });
    },
    onError: (e) => toast.error(e instanceof Error ? e.message : 'The comment could not be sent.'),
  });
  const text = body.trim();
  return (
    <form
      className="flex items-end gap-2"
      onSubmit={(e) => {
        e.preventDefault();
        if (text) send.mutate(text);
      }}
    >
      <textarea
        value={body}
        onChange={(e) => setBody(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.metaKey || e.ctrlKey) && text) send.mutate(text);
          if (e.key === 'Escape' && onDone) onDone();
        }}
        maxLength={MAX_CHARS}
        rows={1}
        autoFocus={autoFocus}
        placeholder={replyTo ? 'Reply…' : 'Comment on this answer…'}
        aria-label={replyTo ? 'Reply' : 'Comment'}
        data-testid="comment-input"
        className={cn(
          'min-h-8 flex-1 resize-y rounded-md border bg-background px-2.5 py-1.5 text-sm placeholder:text-muted-foreground focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none',
        )}
      />
      <Button type="submit" size="sm" disabled={!text || send.isPending} data-testid="comment-send">
        {send.isPending ? <Loader2 className="animate-spin" /> : null}
        {replyTo ? 'Reply' : 'Send'}
      </Button>
    </form>
  );
}
