import { BadgeCheck, ListPlus } from 'lucide-react';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { toast } from 'sonner';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogTitle } from '@/components/ui/dialog';
import { CheckForm } from '@/features/checks/check-form';
import { expectedFromAnswer } from '@/features/checks/checks';
import { useAddCheck } from '@/features/checks/mutations';
import type { ProjectCheck } from '@/features/checks/types';
import { itemHref } from './knowledge';
import { useVerifyRun } from './mutations';

/**
 * An editor's buttons under a succeeded answer: "Save as verified" (the run's question and code
 * become an `example` item, given to the agent with like questions) and "Add as check" (its
 * question with the answer it must get, taken from the answer's @name[value] pairs).
 */
export function RunKnowledgeActions({ projectId, runId, query, answer }: { projectId: string; runId: string; query: string; answer: string | null }) {
  const navigate = useNavigate();
  const verify = useVerifyRun(projectId);
  const addCheck = useAddCheck(projectId);
  const [checking, setChecking] = useState(false);
  const [saved, setSaved] = useState(false);
  return (
    <>
      <Button
        variant="ghost"
        size="sm"
        className="h-7 px-2"
        disabled={verify.isPending || saved}
        title="Save this question and the code that answered it as a verified example in the team's knowledge"
        data-testid="save-verified"
        onClick={() =>
          verify.mutate(runId, {
            onSuccess: (item) => {
              setSaved(true);
              toast.success('Saved as a verified example.', {
                action: { label: 'Open it', onClick: () => void navigate(itemHref(projectId, item.id)) },
              });
            },
            onError: (e) => toast.error(e.message),
          })
        }
      >
        <BadgeCheck /> {saved ? 'Saved as verified' : 'Save as verified'}
      </Button>
      <Button
        variant="ghost"
        size="sm"
        className="h-7 px-2"
        title="Keep this question, with the answer it must get, among the project's checks"
        data-testid="add-as-check"
        onClick={() => {
          addCheck.reset();
          setChecking(true);
        }}
      >
        <ListPlus /> Add as check
      </Button>
      <Dialog open={checking} onOpenChange={setChecking}>
        <DialogContent className="max-w-lg">
          <DialogTitle>Add as a check</DialogTitle>
          <DialogDescription>The question is asked again whenever the checks run; it passes when the answer ends with these values.</DialogDescription>
          <CheckForm
            check={{ question: query, expected: {}, format: '' } as unknown as ProjectCheck}
            initialExpected={expectedFromAnswer(answer)}
            submitLabel="Add check"
            onCancel={() => setChecking(false)}
            pending={addCheck.isPending}
            error={addCheck.error?.message}
            onSave={(f) =>
              addCheck.mutate(
                { ...f, from_run_id: runId },
                {
                  onSuccess: () => {
                    setChecking(false);
                    toast.success('Added to the checks.', { action: { label: 'Open checks', onClick: () => void navigate(`/projects/${projectId}/checks`) } });
                  },
                },
              )
            }
          />
        </DialogContent>
      </Dialog>
    </>
  );
}
