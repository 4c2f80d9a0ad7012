import { useMutation } from '@tanstack/react-query';
import { Ban, Check, Loader2, PencilLine, ShieldCheck, Undo2, X } from 'lucide-react';
import { useState } from 'react';
import type { ApprovalDecision } from '@/client';
import { CodeEditor } from '@/components/code-editor';
import { GuardedButton } from '@/components/guarded-button';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { useBlocked } from '@/features/projects/role';
import { cn } from '@/lib/utils';
import { isFollowedError } from './run-errors';
import type { ApprovalView } from './run-reducer';

/**
 * Review mode: the code of a step waits here, editable, until the user approves it (as written or
 * edited) or rejects it with optional feedback the agent reads before it writes new code.
 */
export function CodeReview({ decide: send, code }: { decide: (decision: ApprovalDecision) => Promise<unknown>; code: string }) {
  const [draft, setDraft] = useState(code);
  const [rejecting, setRejecting] = useState(false);
  const [feedback, setFeedback] = useState('');
  const decide = useMutation({ mutationFn: send });
  const blocked = useBlocked('editor', 'approve, edit or reject code');
  const changed = draft !== code;
  // Once a decision is taken the buttons stay disabled until the stream shows it.
  const sent = decide.isPending || decide.isSuccess;
  const approve = () => {
    if (sent || blocked) return;
    if (!changed) decide.mutate({ decision: 'approve' });
    else if (draft.trim()) decide.mutate({ decision: 'edit', code: draft });
  };
  const reject = () => {
    if (!sent) decide.mutate({ decision: 'reject', feedback: feedback.trim() || null });
  };
  const busy = (d: string) => decide.isPending && decide.variables?.decision === d;
  return (
    <div className="space-y-2" data-testid="code-review">
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-muted-foreground">
        <span data-testid="waiting-for-approval">
          {sent
            ? 'Sending your decision…'
            : blocked
              ? 'This code has not run yet: it waits for an editor or owner to approve or reject it.'
              : 'This code has not run yet. Edit it if you like, then approve or reject it.'}
        </span>
        {changed && (
          <span className="ml-auto flex items-center gap-1 font-medium text-primary">
            <PencilLine className="size-3.5" />
            Edited by you
          </span>
        )}
      </div>
      <CodeEditor
        aria-label="Code waiting for approval"
        data-waiting-focus
        value={draft}
        onChange={setDraft}
        onSubmit={approve}
        readOnly={sent || !!blocked}
        className={cn(changed && 'border-primary/50')}
      />
      {!blocked && <p className="text-[11px] text-muted-foreground">Tab indents · Ctrl+Enter approves · Esc, then Tab, leaves the editor</p>}
      {rejecting ? (
        <form
          className="flex flex-wrap items-center gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            reject();
          }}
        >
          <Input
            autoFocus
            aria-label="Why reject this code? (optional)"
            placeholder="What should the agent do instead? (optional)"
            className="min-w-48 flex-1"
            maxLength={20_000}
            value={feedback}
            disabled={sent}
            onChange={(e) => setFeedback(e.target.value)}
            onKeyDown={(e) => e.key === 'Escape' && setRejecting(false)}
          />
          <Button type="submit" variant="destructive" size="sm" className="h-9" disabled={sent}>
            {busy('reject') ? <Loader2 className="animate-spin" /> : <Ban />} Reject code
          </Button>
          <Button type="button" variant="ghost" size="sm" className="h-9" onClick={() => setRejecting(false)} disabled={sent}>
            Cancel
          </Button>
        </form>
      ) : (
        <div className="flex flex-wrap items-center gap-2">
          {changed ? (
            <>
              <Button size="sm" onClick={approve} disabled={sent || !draft.trim()}>
                {busy('edit') ? <Loader2 className="animate-spin" /> : <Check />} Approve edited code
              </Button>
              <Button size="sm" variant="ghost" onClick={() => setDraft(code)} disabled={sent}>
                <Undo2 /> Discard edits
              </Button>
            </>
          ) : (
            <GuardedButton size="sm" onClick={approve} disabled={sent} blockedBecause={blocked}>
              {busy('approve') ? <Loader2 className="animate-spin" /> : <Check />} Approve
            </GuardedButton>
          )}
          <GuardedButton size="sm" variant="outline" place="ml-auto" onClick={() => setRejecting(true)} disabled={sent} blockedBecause={blocked}>
            <X /> Reject…
          </GuardedButton>
        </div>
      )}
      {decide.error && !isFollowedError(decide.error) && (
        <p role="alert" className="text-sm text-destructive">
          {decide.error.message}
        </p>
      )}
    </div>
  );
}

/** What the user decided about a step's code, shown in the step from then on. */
export function ApprovalNote({ approval }: { approval: ApprovalView }) {
  switch (approval.decision) {
    case 'approve':
      return (
        <p className="flex items-center gap-1.5 text-xs font-medium text-emerald-700 dark:text-emerald-400" data-testid="approval-decision" data-decision="approve">
          <ShieldCheck className="size-3.5" />
          Approved
        </p>
      );
    case 'edit':
      return (
        <p className="flex items-center gap-1.5 text-xs font-medium text-primary" data-testid="approval-decision" data-decision="edit">
          <PencilLine className="size-3.5" />
          Edited before running
          <span className="font-normal text-muted-foreground">— the code above is your edit, the code that ran</span>
        </p>
      );
    case 'reject':
      return (
        <p className="flex items-start gap-2 rounded-lg border bg-muted/60 px-3 py-2 text-sm" data-testid="approval-decision" data-decision="reject">
          <Ban className="mt-0.5 size-4 shrink-0 text-muted-foreground" />
          <span>
            <span className="font-medium">Rejected{approval.feedback ? ':' : '.'}</span>
            {approval.feedback ? ` ${approval.feedback}` : ' The code did not run.'}
          </span>
        </p>
      );
    default:
      return null;
  }
}
