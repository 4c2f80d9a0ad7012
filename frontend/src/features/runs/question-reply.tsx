import { useMutation } from '@tanstack/react-query';
import { Loader2, MessageCircleQuestion, SendHorizontal } from 'lucide-react';
import { useState } from 'react';
import { GuardedButton } from '@/components/guarded-button';
import { Textarea } from '@/components/ui/input';
import { useBlocked } from '@/features/projects/role';
import { cn } from '@/lib/utils';
import { isFollowedError } from './run-errors';
import type { QuestionView } from './run-reducer';
import { WaitingDot } from './waiting-dot';

/** The server's limit on an answer's length. */
const MAX_ANSWER = 20_000;

function AnswerForm({ answer, autoFocus }: { answer: (answer: string) => Promise<unknown>; autoFocus?: boolean }) {
  const blocked = useBlocked('editor', "answer the agent's questions");
  const [text, setText] = useState('');
  const reply = useMutation({ mutationFn: answer });
  // After a reply is taken the box stays as it is until the run's stream says the answer arrived.
  const sent = reply.isPending || reply.isSuccess;
  const send = () => {
    const value = text.trim();
    if (value && !sent) reply.mutate(value);
  };
  return (
    <form
      className="space-y-2"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      <Textarea
        aria-label="Your answer"
        data-waiting-focus
        autoFocus={autoFocus && !blocked}
        rows={2}
        maxLength={MAX_ANSWER}
        className="max-h-48 min-h-[3.5rem] field-sizing-content disabled:cursor-not-allowed"
        placeholder={blocked ? 'An editor or owner of the project answers here.' : 'Type your answer…  (Enter to send, Shift+Enter for a new line)'}
        title={blocked ?? undefined}
        value={text}
        disabled={sent || !!blocked}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            send();
          }
        }}
      />
      <div className="flex items-center gap-3">
        <span className="flex items-center gap-1.5 text-xs font-medium text-amber-700 dark:text-amber-400" data-testid="waiting-for-answer">
          <WaitingDot />
          {sent
            ? 'Sending your answer…'
            : blocked
              ? 'Waiting for an answer — the run continues once an editor or owner replies.'
              : 'Waiting for your answer — the run continues once you reply.'}
        </span>
        <GuardedButton type="submit" size="sm" place="ml-auto" blockedBecause={blocked} disabled={!text.trim() || sent}>
          {reply.isPending ? <Loader2 className="animate-spin" /> : <SendHorizontal />} Answer
        </GuardedButton>
      </div>
      {reply.error && !isFollowedError(reply.error) && (
        <p role="alert" className="text-sm text-destructive">
          {reply.error.message}
        </p>
      )}
    </form>
  );
}

/**
 * A question the agent's code asked the user (ask_user), shown after the step that asked: with an
 * answer box while the run waits for it, with the answer once given.
 */
export function QuestionReply({
  answer,
  input,
  waiting,
  live,
}: {
  /** Sends the user's answer to the run. */
  answer: (answer: string) => Promise<unknown>;
  input: QuestionView;
  /** The run waits for this answer now. */
  waiting: boolean;
  /** The question arrived on this page's stream (the answer box takes the focus). */
  live?: boolean;
}) {
  const state = input.answer != null ? 'answered' : waiting ? 'waiting' : 'unanswered';
  return (
    <section
      className={cn(
        'space-y-3 rounded-xl border p-4 text-sm shadow-xs',
        state === 'waiting' ? 'border-amber-500/40 bg-amber-500/5 ring-2 ring-amber-500/10' : 'bg-card',
      )}
      data-testid="question"
      data-state={state}
      aria-label="The agent's question"
    >
      <header className="flex items-center gap-2 text-xs text-muted-foreground">
        <MessageCircleQuestion className={cn('size-4', state === 'waiting' ? 'text-amber-600 dark:text-amber-400' : 'text-primary')} />
        <span className="font-medium text-foreground">The agent asks</span>
        <span>after step {input.step}</span>
      </header>
      <p className="text-[15px] leading-relaxed whitespace-pre-wrap" data-testid="question-text">
        {input.question}
      </p>
      {state === 'waiting' && <AnswerForm answer={answer} autoFocus={live} />}
      {state === 'answered' && (
        <div className="flex items-start gap-2 border-t pt-3">
          <span className="mt-0.5 shrink-0 rounded-md bg-primary/10 px-1.5 py-0.5 text-xs font-medium text-primary">You</span>
          <p className="whitespace-pre-wrap" data-testid="question-answer">
            {input.answer}
          </p>
        </div>
      )}
      {state === 'unanswered' && <p className="text-xs text-muted-foreground">Not answered: the run ended first.</p>}
    </section>
  );
}
