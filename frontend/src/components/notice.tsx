import { CheckCircle2, Loader2, X } from 'lucide-react';
import { cn } from '@/lib/utils';

/** What an action just did, or why it failed: one sentence in a tinted box. */
export type NoticeText = { tone: 'ok' | 'error'; text: string };

/** A notice above what it is about; with `onDismiss`, it can be closed. */
export function Notice({ notice, onDismiss, testId }: { notice: NoticeText; onDismiss?: () => void; testId?: string }) {
  return (
    <div
      role={notice.tone === 'error' ? 'alert' : 'status'}
      data-testid={testId}
      className={cn(
        'flex items-start gap-2 rounded-lg border px-3 py-2 text-sm',
        notice.tone === 'error'
          ? 'border-destructive/30 bg-destructive/5 text-destructive'
          : 'border-emerald-500/30 bg-emerald-500/5 text-emerald-800 dark:text-emerald-300',
      )}
    >
      {notice.tone === 'ok' && <CheckCircle2 className="mt-0.5 size-4 shrink-0" />}
      <p className="min-w-0 flex-1">{notice.text}</p>
      {onDismiss && (
        <button type="button" aria-label="Dismiss" className="cursor-pointer rounded-sm opacity-60 hover:opacity-100" onClick={onDismiss}>
          <X className="size-4" />
        </button>
      )}
    </div>
  );
}

/** A list's first load ("Loading the members…") or why it failed (the server's sentence); nothing once it is there. */
export function LoadState({ query, loading }: { query: { isLoading: boolean; error: Error | null }; loading: string }) {
  if (query.isLoading)
    return (
      <p className="flex items-center gap-2 text-sm text-muted-foreground">
        <Loader2 className="size-4 animate-spin" /> {loading}
      </p>
    );
  if (query.error)
    return (
      <p role="alert" className="text-sm text-destructive">
        {query.error.message}
      </p>
    );
  return null;
}
