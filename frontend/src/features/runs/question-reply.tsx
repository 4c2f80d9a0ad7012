import { useMutation } from '@tanstack/react-query';
import { MessageCircleQuestion } from 'lucide-react';
import { useState } from 'react';
import { answerRunApiV1RunsRunIdInputPost } from '@/client';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';

/** The agent asked the user something (input.requested): answer it to let the run go on. */
export function QuestionReply({ runId, question, canAnswer }: { runId: string; question: string; canAnswer: boolean }) {
  const [answer, setAnswer] = useState('');
  const reply = useMutation({
    mutationFn: async (text: string) => {
      await answerRunApiV1RunsRunIdInputPost({ path: { run_id: runId }, body: { answer: text } });
    },
    onSuccess: () => setAnswer(''),
  });
  return (
    <div className="space-y-2 rounded-xl border border-amber-500/30 bg-amber-500/5 p-3 text-sm" data-testid="question">
      <p className="flex items-start gap-2">
        <MessageCircleQuestion className="mt-0.5 size-4 shrink-0 text-amber-600" />
        <span>{question}</span>
      </p>
      {canAnswer && (
        <form
          className="flex gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            if (answer.trim()) reply.mutate(answer.trim());
          }}
        >
          <Input aria-label="Your answer" value={answer} onChange={(e) => setAnswer(e.target.value)} placeholder="Your answer…" />
          <Button type="submit" size="sm" className="h-9" disabled={!answer.trim() || reply.isPending}>
            Reply
          </Button>
        </form>
      )}
    </div>
  );
}
